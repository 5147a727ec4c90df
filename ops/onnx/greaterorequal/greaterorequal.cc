// ONNX GreaterOrEqual: A >= B with numpy broadcasting; BOOL output.
#include "../common/binary.h"

namespace opforge::ops {
OPFORGE_OP(GreaterOrEqual, "ai.onnx::GreaterOrEqual")
    .doc("Elementwise A >= B with numpy broadcasting.")
    .with(compareOp<kNumeric>(
        "GreaterOrEqual", [](auto x, auto y) -> bool { return x >= y; }, SymCmp::kGe));
}  // namespace opforge::ops
