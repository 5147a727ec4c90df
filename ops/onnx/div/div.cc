// ONNX Div: C = A / B with numpy broadcasting. Integers divide truncating toward zero (C++ and
// ONNX Runtime); an integer division by zero is a run-time error, not undefined behaviour.
#include "div.h"

#include <limits>

#include "../common/binary.h"

namespace opforge::ops {
namespace {
std::optional<DimExpr> symDiv(const DimExpr& a, const DimExpr& b) {
  if (a.isConst() && b.isConst()) {
    if (b.constValue() == 0) return std::nullopt;
    // INT64_MIN / -1 does not fit (and traps with SIGFPE): leave the value unknown; the kernel
    // wraps it as ONNX Runtime does.
    if (b.constValue() == -1 && a.constValue() == std::numeric_limits<int64_t>::min())
      return std::nullopt;
    return DimExpr(a.constValue() / b.constValue());
  }
  if (b.isConst() && b.constValue() > 0) return floorDiv(a, b);  // shape values are >= 0
  // By a symbolic size: only where the quotient is exact ((B * 4) / B, what a Reshape(-1) and
  // the exporter's division give back); a division left unsimplified stays unknown.
  if (!b.isConst()) {
    DimExpr q = floorDiv(a, b);
    if (q.kind() != DimExpr::Kind::kFloorDiv) return q;
  }
  return std::nullopt;
}
}  // namespace

OPFORGE_OP(Div, "ai.onnx::Div")
    .doc("Elementwise A / B with numpy broadcasting.")
    .with([](OpDef& d) {
      defineBinary<kNumeric>(d, "Div", kDivFn, symDiv, [](auto y) {
        using C = decltype(y);
        if constexpr (std::is_integral_v<C>) return y != C(0);
        return true;
      });
    });
}  // namespace opforge::ops
