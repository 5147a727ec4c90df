// ONNX LeakyRelu: x for x >= 0, alpha * x otherwise.
#include "../common/unary.h"

namespace opforge::ops {
OPFORGE_OP(LeakyRelu, "ai.onnx::LeakyRelu")
    .doc("Elementwise x >= 0 ? x : alpha * x.")
    .attr<double>("alpha", 0.01, "slope for x < 0")
    .with([](OpDef& d) {
      defineUnary<kFloats>(d, "LeakyRelu", [](const AttrMap& a) {
        const double alpha = a.get<double>("alpha");
        return [alpha](auto x) {
          using C = decltype(x);
          return x >= C(0) ? x : static_cast<C>(static_cast<C>(alpha) * x);
        };
      });
    });
}  // namespace opforge::ops
