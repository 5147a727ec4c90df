// ONNX Asin: arc sine, elementwise.
#include "../common/unary.h"

namespace opforge::ops {
OPFORGE_OP(Asin, "ai.onnx::Asin")
    .doc("Elementwise arc sine.")
    .with(unaryOp<kFloats>("Asin", [](auto x) {
      using C = decltype(x);
      return static_cast<C>(std::asin(x));
    }));
}  // namespace opforge::ops
