// ONNX Not: logical negation of a BOOL tensor.
#include "../common/unary.h"

namespace opforge::ops {
OPFORGE_OP(Not, "ai.onnx::Not")
    .doc("Elementwise logical not.")
    .with(unaryOp<kBools>(
        "Not", [](bool x) { return !x; },
        // A known condition stays known (an If on `not (size == size)`).
        [](const DimExpr& e) { return DimExpr(e.constValue() == 0 ? 1 : 0); }));
}  // namespace opforge::ops
