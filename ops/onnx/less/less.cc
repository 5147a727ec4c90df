// ONNX Less: A < B with numpy broadcasting; BOOL output.
#include "../common/binary.h"

namespace opforge::ops {
OPFORGE_OP(Less, "ai.onnx::Less")
    .doc("Elementwise A < B with numpy broadcasting.")
    .with(compareOp<kNumeric>(
        "Less", [](auto x, auto y) -> bool { return x < y; }, SymCmp::kLt));
}  // namespace opforge::ops
