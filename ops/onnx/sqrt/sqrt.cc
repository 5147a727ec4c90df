// ONNX Sqrt: square root, elementwise.
#include "../common/unary.h"

namespace opforge::ops {
OPFORGE_OP(Sqrt, "ai.onnx::Sqrt")
    .doc("Elementwise square root.")
    .with(unaryOp<kFloats>("Sqrt", [](auto x) {
      using C = decltype(x);
      return static_cast<C>(std::sqrt(x));
    }));
}  // namespace opforge::ops
