// ONNX Selu: gamma * (x for x > 0, alpha * (e^x - 1) otherwise).
#include "../common/unary.h"

namespace opforge::ops {
OPFORGE_OP(Selu, "ai.onnx::Selu")
    .doc("Elementwise gamma * (x > 0 ? x : alpha * (exp(x) - 1)).")
    .attr<double>("alpha", 1.67326319217681884765625)
    .attr<double>("gamma", 1.05070102214813232421875)
    .with([](OpDef& d) {
      defineUnary<kFloats>(d, "Selu", [](const AttrMap& a) {
        const double alpha = a.get<double>("alpha"), gamma = a.get<double>("gamma");
        return [alpha, gamma](auto x) {
          using C = decltype(x);
          const C g = static_cast<C>(gamma), al = static_cast<C>(alpha);
          return x > C(0) ? static_cast<C>(g * x) : static_cast<C>(g * al * std::expm1(x));
        };
      });
    });
}  // namespace opforge::ops
