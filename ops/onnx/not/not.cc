// ONNX Not: logical negation of a BOOL tensor.
#include "../common/unary.h"

namespace opforge::ops {
OPFORGE_OP(Not, "ai.onnx::Not")
    .doc("Elementwise logical not.")
    .with(unaryOp<kBools>("Not", [](bool x) { return !x; }));
}  // namespace opforge::ops
