// ONNX Sum: elementwise sum of one or more inputs with numpy broadcasting.
#include "../common/nary.h"

namespace opforge::ops {
OPFORGE_OP(Sum, "ai.onnx::Sum").doc("Elementwise sum of the inputs.").with([](OpDef& d) {
  defineNary<kNumeric>(
      d, "Sum", [](auto a, auto b) { return a + b; }, false,
      [](const DimExpr& a, const DimExpr& b) -> std::optional<DimExpr> { return a + b; });
});
}  // namespace opforge::ops
