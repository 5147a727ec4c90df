// ONNX Neg: -x, elementwise (signed integers wrap like C++ at their minimum).
#include "../common/unary.h"

namespace opforge::ops {
OPFORGE_OP(Neg, "ai.onnx::Neg")
    .doc("Elementwise negation.")
    .with(unaryOp<kFloats | kSigned>(
        "Neg",
        [](auto x) {
          using C = decltype(x);
          if constexpr (std::is_integral_v<C>)
            return static_cast<C>(0 - static_cast<std::make_unsigned_t<C>>(x));
          else
            return -x;
        },
        [](const DimExpr& e) { return DimExpr(int64_t{0}) - e; }));
}  // namespace opforge::ops
