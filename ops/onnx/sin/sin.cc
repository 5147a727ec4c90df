// ONNX Sin: sine, elementwise.
#include "../common/unary.h"

namespace opforge::ops {
OPFORGE_OP(Sin, "ai.onnx::Sin").doc("Elementwise sine.").with(unaryOp<kFloats>("Sin", [](auto x) {
  using C = decltype(x);
  return static_cast<C>(std::sin(x));
}));
}  // namespace opforge::ops
