// ONNX Atan: arc tangent, elementwise.
#include "../common/unary.h"

namespace opforge::ops {
OPFORGE_OP(Atan, "ai.onnx::Atan")
    .doc("Elementwise arc tangent.")
    .with(unaryOp<kFloats>("Atan", [](auto x) {
      using C = decltype(x);
      return static_cast<C>(std::atan(x));
    }));
}  // namespace opforge::ops
