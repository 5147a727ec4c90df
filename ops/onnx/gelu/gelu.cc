// ONNX Gelu (opset 20): x * Phi(x) with the exact erf form, or the tanh approximation
// 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))) when approximate = "tanh" — the engine's
// epilogue activations gelu / gelu_tanh (opforge/epilogue.h), which the fused ops apply too.
#include "gelu.h"

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
        return geluFn(a.get<std::string>("approximate") == "tanh");
      });
    });
}  // namespace opforge::ops
