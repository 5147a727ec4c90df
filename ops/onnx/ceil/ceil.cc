// ONNX Ceil: ceiling, elementwise.
#include "../common/unary.h"

namespace opforge::ops {
OPFORGE_OP(Ceil, "ai.onnx::Ceil")
    .doc("Elementwise ceiling.")
    .with(unaryOp<kFloats>("Ceil", [](auto x) {
      using C = decltype(x);
      return static_cast<C>(std::ceil(x));
    }));
}  // namespace opforge::ops
