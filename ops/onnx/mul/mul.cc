// ONNX Mul: C = A * B with numpy broadcasting.
#include "../common/binary.h"

namespace opforge::ops {
OPFORGE_OP(Mul, "ai.onnx::Mul")
    .doc("Elementwise A * B with numpy broadcasting.")
    .with(binaryOp("Mul", kNumeric, [](auto x, auto y) { return x * y; }));
}  // namespace opforge::ops
