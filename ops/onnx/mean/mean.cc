// ONNX Mean: elementwise mean of one or more float inputs with numpy broadcasting.
#include "../common/nary.h"

namespace opforge::ops {
OPFORGE_OP(Mean, "ai.onnx::Mean").doc("Elementwise mean of the inputs.").with([](OpDef& d) {
  defineNary<kFloats>(
      d, "Mean", [](auto a, auto b) { return a + b; }, true);
});
}  // namespace opforge::ops
