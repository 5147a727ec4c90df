// ONNX Cos: cosine, elementwise.
#include "../common/unary.h"

namespace opforge::ops {
OPFORGE_OP(Cos, "ai.onnx::Cos").doc("Elementwise cosine.").with(unaryOp<kFloats>("Cos", [](auto x) {
  using C = decltype(x);
  return static_cast<C>(std::cos(x));
}));
}  // namespace opforge::ops
