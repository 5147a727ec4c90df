// ONNX Celu: max(0, x) + min(0, alpha * (e^(x / alpha) - 1)).
#include "../common/unary.h"

namespace opforge::ops {
OPFORGE_OP(Celu, "ai.onnx::Celu")
    .doc("Continuously differentiable exponential linear unit, elementwise.")
    .attr<double>("alpha", 1.0)
    .check([](const AttrMap& a) -> Status {
      if (a.get<double>("alpha") == 0) return Status::invalid("attribute 'alpha' must not be 0");
      return Status::ok();
    })
    .with([](OpDef& d) {
      defineUnary<kFloats>(d, "Celu", [](const AttrMap& a) {
        const double alpha = a.get<double>("alpha");
        return [alpha](auto x) {
          using C = decltype(x);
          const C al = static_cast<C>(alpha);
          return x > C(0) ? x : static_cast<C>(al * std::expm1(x / al));
        };
      });
    });
}  // namespace opforge::ops
