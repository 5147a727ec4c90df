// ONNX Mul: C = A * B with numpy broadcasting (integers wrap).
#include "mul.h"

#include "../common/binary.h"

namespace opforge::ops {
Status mulReference(const Tensor& a, const Tensor& b, const Tensor& y) {
  return binaryReference<kNumeric>("Mul", kMulFn, nullptr, a, b, y);
}

OPFORGE_OP(Mul, "ai.onnx::Mul")
    .doc("Elementwise A * B with numpy broadcasting.")
    .with(binaryOp<kNumeric>("Mul", kMulFn,
                             [](const DimExpr& a, const DimExpr& b) -> std::optional<DimExpr> {
                               return a * b;
                             }));
}  // namespace opforge::ops
