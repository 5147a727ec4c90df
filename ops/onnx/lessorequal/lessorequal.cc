// ONNX LessOrEqual: A <= B with numpy broadcasting; BOOL output.
#include "../common/binary.h"

namespace opforge::ops {
OPFORGE_OP(LessOrEqual, "ai.onnx::LessOrEqual")
    .doc("Elementwise A <= B with numpy broadcasting.")
    .with(compareOp<kNumeric>(
        "LessOrEqual", [](auto x, auto y) -> bool { return x <= y; }, SymCmp::kLe));
}  // namespace opforge::ops
