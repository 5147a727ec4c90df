// ONNX Tanh: hyperbolic tangent, elementwise.
#include "tanh.h"

#include "../common/unary.h"

namespace opforge::ops {
OPFORGE_OP(Tanh, "ai.onnx::Tanh")
    .doc("Elementwise hyperbolic tangent.")
    .with(unaryOp<kFloats>("Tanh", kTanhFn));
}  // namespace opforge::ops
