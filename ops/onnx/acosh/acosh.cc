// ONNX Acosh: inverse hyperbolic cosine, elementwise.
#include "../common/unary.h"

namespace opforge::ops {
OPFORGE_OP(Acosh, "ai.onnx::Acosh")
    .doc("Elementwise inverse hyperbolic cosine.")
    .with(unaryOp<kFloats>("Acosh", [](auto x) {
      using C = decltype(x);
      return static_cast<C>(std::acosh(x));
    }));
}  // namespace opforge::ops
