// ONNX Gelu (opset 20): x * Phi(x) with the exact erf form, or the tanh approximation
// 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))) when approximate = "tanh".
#include "../common/unary.h"

namespace opforge::ops {
OPFORGE_OP(Gelu, "ai.onnx::Gelu")
    .doc("Gaussian error linear unit, elementwise.")
    .attr<std::string>("approximate", std::string("none"), "none | tanh")
    .check([](const AttrMap& a) -> Status {
      auto m = a.get<std::string>("approximate");
      if (m != "none" && m != "tanh")
        return Status::invalid("attribute 'approximate' must be 'none' or 'tanh', got '" + m + "'");
      return Status::ok();
    })
    .with([](OpDef& d) {
      defineUnary<kFloats>(d, "Gelu", [](const AttrMap& a) {
        const bool tanh_form = a.get<std::string>("approximate") == "tanh";
        return [tanh_form](auto x) {
          using C = decltype(x);
          if (tanh_form) {
            const C k = static_cast<C>(0.7978845608028654);  // sqrt(2 / pi)
            return static_cast<C>(C(0.5) * x *
                                  (C(1) + std::tanh(k * (x + C(0.044715) * x * x * x))));
          }
          return static_cast<C>(C(0.5) * x *
                                (C(1) + std::erf(x * static_cast<C>(0.7071067811865476))));
        };
      });
    });
}  // namespace opforge::ops
