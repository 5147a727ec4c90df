// ONNX Xor: logical A xor B with numpy broadcasting; BOOL output.
#include "../common/binary.h"

namespace opforge::ops {
OPFORGE_OP(Xor, "ai.onnx::Xor")
    .doc("Elementwise logical A xor B with numpy broadcasting.")
    .with(compareOp<kBools>("Xor", [](auto x, auto y) -> bool { return x != y; }));
}  // namespace opforge::ops
