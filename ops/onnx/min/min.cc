// ONNX Min: elementwise minimum of one or more inputs with numpy broadcasting (NaN propagates).
#include "../common/nary.h"

namespace opforge::ops {
OPFORGE_OP(Min, "ai.onnx::Min").doc("Elementwise minimum of the inputs.").with([](OpDef& d) {
  defineNary<kNumeric>(
      d, "Min", [](auto a, auto b) { return nanMin(a, b); }, false,
      [](const DimExpr& a, const DimExpr& b) -> std::optional<DimExpr> { return min(a, b); });
});
}  // namespace opforge::ops
