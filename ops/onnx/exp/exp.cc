// ONNX Exp: e^x, elementwise.
#include "../common/unary.h"

namespace opforge::ops {
OPFORGE_OP(Exp, "ai.onnx::Exp").doc("Elementwise e^x.").with(unaryOp<kFloats>("Exp", [](auto x) {
  using C = decltype(x);
  return static_cast<C>(std::exp(x));
}));
}  // namespace opforge::ops
