// ONNX HardSigmoid: max(0, min(1, alpha * x + beta)).
#include <algorithm>

#include "../common/unary.h"

namespace opforge::ops {
OPFORGE_OP(HardSigmoid, "ai.onnx::HardSigmoid")
    .doc("Elementwise max(0, min(1, alpha * x + beta)).")
    .attr<double>("alpha", 0.2)
    .attr<double>("beta", 0.5)
    .with([](OpDef& d) {
      defineUnary<kFloats>(d, "HardSigmoid", [](const AttrMap& a) {
        const double alpha = a.get<double>("alpha"), beta = a.get<double>("beta");
        return [alpha, beta](auto x) {
          using C = decltype(x);
          const C v = static_cast<C>(alpha) * x + static_cast<C>(beta);
          return std::max(C(0), std::min(C(1), v));
        };
      });
    });
}  // namespace opforge::ops
