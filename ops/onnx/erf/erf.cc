// ONNX Erf: error function, elementwise.
#include "../common/unary.h"

namespace opforge::ops {
OPFORGE_OP(Erf, "ai.onnx::Erf")
    .doc("Elementwise error function.")
    .with(unaryOp<kFloats>("Erf", [](auto x) {
      using C = decltype(x);
      return static_cast<C>(std::erf(x));
    }));
}  // namespace opforge::ops
