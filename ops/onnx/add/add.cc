// ONNX Add: C = A + B with numpy broadcasting (integers wrap).
#include "add.h"

#include "../common/binary.h"

namespace opforge::ops {
namespace {
constexpr auto kAdd = [](auto x, auto y) { return x + y; };
}  // namespace

Status addReference(const Tensor& a, const Tensor& b, const Tensor& y) {
  return binaryReference<kNumeric>("Add", kAdd, nullptr, a, b, y);
}

OPFORGE_OP(Add, "ai.onnx::Add")
    .doc("Elementwise A + B with numpy broadcasting.")
    .with(binaryOp<kNumeric>("Add", kAdd,
                             [](const DimExpr& a, const DimExpr& b) -> std::optional<DimExpr> {
                               return a + b;
                             }));
}  // namespace opforge::ops
