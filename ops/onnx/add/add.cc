// ONNX Add: C = A + B with numpy broadcasting.
#include "../common/binary.h"

namespace opforge::ops {
OPFORGE_OP(Add, "ai.onnx::Add")
    .doc("Elementwise A + B with numpy broadcasting.")
    .with(binaryOp("Add", kNumeric, [](auto x, auto y) { return x + y; }));
}  // namespace opforge::ops
