// ONNX Tanh: hyperbolic tangent, elementwise.
#include "../common/unary.h"

namespace opforge::ops {
OPFORGE_OP(Tanh, "ai.onnx::Tanh")
    .doc("Elementwise hyperbolic tangent.")
    .with(unaryOp<kFloats>("Tanh", [](auto x) {
      using C = decltype(x);
      return static_cast<C>(std::tanh(x));
    }));
}  // namespace opforge::ops
