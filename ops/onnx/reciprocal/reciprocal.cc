// ONNX Reciprocal: 1 / x, elementwise.
#include "../common/unary.h"

namespace opforge::ops {
OPFORGE_OP(Reciprocal, "ai.onnx::Reciprocal")
    .doc("Elementwise 1 / x.")
    .with(unaryOp<kFloats>("Reciprocal", [](auto x) {
      using C = decltype(x);
      return static_cast<C>(C(1) / x);
    }));
}  // namespace opforge::ops
