// ONNX Greater: A > B with numpy broadcasting; BOOL output.
#include "../common/binary.h"

namespace opforge::ops {
OPFORGE_OP(Greater, "ai.onnx::Greater")
    .doc("Elementwise A > B with numpy broadcasting.")
    .with(compareOp<kNumeric>(
        "Greater", [](auto x, auto y) -> bool { return x > y; }, SymCmp::kGt));
}  // namespace opforge::ops
