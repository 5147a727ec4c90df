// ONNX Asinh: inverse hyperbolic sine, elementwise.
#include "../common/unary.h"

namespace opforge::ops {
OPFORGE_OP(Asinh, "ai.onnx::Asinh")
    .doc("Elementwise inverse hyperbolic sine.")
    .with(unaryOp<kFloats>("Asinh", [](auto x) {
      using C = decltype(x);
      return static_cast<C>(std::asinh(x));
    }));
}  // namespace opforge::ops
