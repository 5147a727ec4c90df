// ONNX Sinh: hyperbolic sine, elementwise.
#include "../common/unary.h"

namespace opforge::ops {
OPFORGE_OP(Sinh, "ai.onnx::Sinh")
    .doc("Elementwise hyperbolic sine.")
    .with(unaryOp<kFloats>("Sinh", [](auto x) {
      using C = decltype(x);
      return static_cast<C>(std::sinh(x));
    }));
}  // namespace opforge::ops
