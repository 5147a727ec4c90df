// ONNX Sigmoid: 1 / (1 + e^-x), written so that e^x never overflows.
#include "sigmoid.h"

#include "../common/unary.h"

namespace opforge::ops {
OPFORGE_OP(Sigmoid, "ai.onnx::Sigmoid")
    .doc("Elementwise logistic function.")
    .with(unaryOp<kFloats>("Sigmoid", kSigmoidFn));
}  // namespace opforge::ops
