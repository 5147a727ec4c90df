// ONNX Swish (opset 24): x * sigmoid(alpha * x).
#include "../common/unary.h"

namespace opforge::ops {
OPFORGE_OP(Swish, "ai.onnx::Swish")
    .doc("Elementwise x * sigmoid(alpha * x).")
    .attr<double>("alpha", 1.0)
    .with([](OpDef& d) {
      defineUnary<kFloats>(d, "Swish", [](const AttrMap& a) {
        const double alpha = a.get<double>("alpha");
        return [alpha](auto x) {
          using C = decltype(x);
          const double z = alpha * static_cast<double>(x);
          const double s = z >= 0 ? 1 / (1 + std::exp(-z)) : std::exp(z) / (1 + std::exp(z));
          return static_cast<C>(static_cast<double>(x) * s);
        };
      });
    });
}  // namespace opforge::ops
