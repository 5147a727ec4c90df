// ONNX Relu: max(x, 0), elementwise (floats and, since opset 14, signed integers).
#include "../common/unary.h"

namespace opforge::ops {
OPFORGE_OP(Relu, "ai.onnx::Relu")
    .doc("Elementwise max(x, 0).")
    .with(unaryOp<kFloats | kSigned>("Relu", [](auto x) {
      using C = decltype(x);
      return x < C(0) ? C(0) : x;
    }));
}  // namespace opforge::ops
