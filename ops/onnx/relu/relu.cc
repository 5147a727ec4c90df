// ONNX Relu: max(x, 0), elementwise (floats and, since opset 14, signed integers).
#include "relu.h"

#include "../common/unary.h"

namespace opforge::ops {
OPFORGE_OP(Relu, "ai.onnx::Relu")
    .doc("Elementwise max(x, 0).")
    .with(unaryOp<kFloats | kSigned>("Relu", kReluFn));
}  // namespace opforge::ops
