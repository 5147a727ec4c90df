// ONNX Equal: A == B with numpy broadcasting; BOOL output.
#include "../common/binary.h"

namespace opforge::ops {
OPFORGE_OP(Equal, "ai.onnx::Equal")
    .doc("Elementwise A == B with numpy broadcasting.")
    .with(compareOp<kAll>(
        "Equal", [](auto x, auto y) -> bool { return x == y; }, SymCmp::kEq));
}  // namespace opforge::ops
