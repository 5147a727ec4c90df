// ONNX Mul: C = A * B with numpy broadcasting (integers wrap).
#include "../common/binary.h"

namespace opforge::ops {
OPFORGE_OP(Mul, "ai.onnx::Mul")
    .doc("Elementwise A * B with numpy broadcasting.")
    .with(binaryOp<kNumeric>(
        "Mul", [](auto x, auto y) { return x * y; },
        [](const DimExpr& a, const DimExpr& b) -> std::optional<DimExpr> { return a * b; }));
}  // namespace opforge::ops
