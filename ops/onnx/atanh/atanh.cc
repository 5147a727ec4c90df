// ONNX Atanh: inverse hyperbolic tangent, elementwise.
#include "../common/unary.h"

namespace opforge::ops {
OPFORGE_OP(Atanh, "ai.onnx::Atanh")
    .doc("Elementwise inverse hyperbolic tangent.")
    .with(unaryOp<kFloats>("Atanh", [](auto x) {
      using C = decltype(x);
      return static_cast<C>(std::atanh(x));
    }));
}  // namespace opforge::ops
