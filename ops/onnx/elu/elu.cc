// ONNX Elu: x for x >= 0, alpha * (e^x - 1) otherwise.
#include "../common/unary.h"

namespace opforge::ops {
OPFORGE_OP(Elu, "ai.onnx::Elu")
    .doc("Elementwise x >= 0 ? x : alpha * (exp(x) - 1).")
    .attr<double>("alpha", 1.0)
    .with([](OpDef& d) {
      defineUnary<kFloats>(d, "Elu", [](const AttrMap& a) {
        const double alpha = a.get<double>("alpha");
        return [alpha](auto x) {
          using C = decltype(x);
          return x >= C(0) ? x : static_cast<C>(static_cast<C>(alpha) * std::expm1(x));
        };
      });
    });
}  // namespace opforge::ops
