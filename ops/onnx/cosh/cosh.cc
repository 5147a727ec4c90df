// ONNX Cosh: hyperbolic cosine, elementwise.
#include "../common/unary.h"

namespace opforge::ops {
OPFORGE_OP(Cosh, "ai.onnx::Cosh")
    .doc("Elementwise hyperbolic cosine.")
    .with(unaryOp<kFloats>("Cosh", [](auto x) {
      using C = decltype(x);
      return static_cast<C>(std::cosh(x));
    }));
}  // namespace opforge::ops
