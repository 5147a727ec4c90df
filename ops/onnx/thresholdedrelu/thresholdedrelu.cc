// ONNX ThresholdedRelu: x for x > alpha, 0 otherwise.
#include "../common/unary.h"

namespace opforge::ops {
OPFORGE_OP(ThresholdedRelu, "ai.onnx::ThresholdedRelu")
    .doc("Elementwise x > alpha ? x : 0.")
    .attr<double>("alpha", 1.0)
    .with([](OpDef& d) {
      defineUnary<kFloats>(d, "ThresholdedRelu", [](const AttrMap& a) {
        const double alpha = a.get<double>("alpha");
        return [alpha](auto x) {
          using C = decltype(x);
          return x > static_cast<C>(alpha) ? x : C(0);
        };
      });
    });
}  // namespace opforge::ops
