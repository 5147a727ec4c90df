// ONNX Add: C = A + B with numpy broadcasting (integers wrap).
#include "add.h"

#include "../common/binary.h"

namespace opforge::ops {
Status addReference(const Tensor& a, const Tensor& b, const Tensor& y) {
  return binaryReference<kNumeric>("Add", kAddFn, nullptr, a, b, y);
}

OPFORGE_OP(Add, "ai.onnx::Add")
    .doc("Elementwise A + B with numpy broadcasting.")
    .with(binaryOp<kNumeric>("Add", kAddFn,
                             [](const DimExpr& a, const DimExpr& b) -> std::optional<DimExpr> {
                               return a + b;
                             }));
}  // namespace opforge::ops
