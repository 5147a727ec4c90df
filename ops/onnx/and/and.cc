// ONNX And: logical A and B with numpy broadcasting; BOOL output.
#include "../common/binary.h"

namespace opforge::ops {
OPFORGE_OP(And, "ai.onnx::And")
    .doc("Elementwise logical A and B with numpy broadcasting.")
    .with(compareOp<kBools>("And", [](auto x, auto y) -> bool { return x && y; }));
}  // namespace opforge::ops
