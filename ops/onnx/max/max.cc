// ONNX Max: elementwise maximum of one or more inputs with numpy broadcasting (NaN propagates).
#include "../common/nary.h"

namespace opforge::ops {
OPFORGE_OP(Max, "ai.onnx::Max").doc("Elementwise maximum of the inputs.").with([](OpDef& d) {
  defineNary<kNumeric>(
      d, "Max", [](auto a, auto b) { return nanMax(a, b); }, false,
      [](const DimExpr& a, const DimExpr& b) -> std::optional<DimExpr> { return max(a, b); });
});
}  // namespace opforge::ops
