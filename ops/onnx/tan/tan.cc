// ONNX Tan: tangent, elementwise.
#include "../common/unary.h"

namespace opforge::ops {
OPFORGE_OP(Tan, "ai.onnx::Tan")
    .doc("Elementwise tangent.")
    .with(unaryOp<kFloats>("Tan", [](auto x) {
      using C = decltype(x);
      return static_cast<C>(std::tan(x));
    }));
}  // namespace opforge::ops
