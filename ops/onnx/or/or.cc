// ONNX Or: logical A or B with numpy broadcasting; BOOL output.
#include "../common/binary.h"

namespace opforge::ops {
OPFORGE_OP(Or, "ai.onnx::Or")
    .doc("Elementwise logical A or B with numpy broadcasting.")
    .with(compareOp<kBools>("Or", [](auto x, auto y) -> bool { return x || y; }));
}  // namespace opforge::ops
