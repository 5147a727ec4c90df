// ONNX Sub: C = A - B with numpy broadcasting (integers wrap).
#include "../common/binary.h"
#include "../common/wrap.h"

namespace opforge::ops {
OPFORGE_OP(Sub, "ai.onnx::Sub")
    .doc("Elementwise A - B with numpy broadcasting.")
    .with(binaryOp<kNumeric>(
        "Sub", [](auto x, auto y) { return wrapSub(x, y); },
        [](const DimExpr& a, const DimExpr& b) -> std::optional<DimExpr> { return a - b; }));
}  // namespace opforge::ops
