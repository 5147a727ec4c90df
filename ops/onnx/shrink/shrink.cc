// ONNX Shrink: x + bias for x < -lambd, x - bias for x > lambd, 0 otherwise.
#include "../common/unary.h"

namespace opforge::ops {
OPFORGE_OP(Shrink, "ai.onnx::Shrink")
    .doc("Elementwise shrinkage.")
    .attr<double>("bias", 0.0)
    .attr<double>("lambd", 0.5)
    .with([](OpDef& d) {
      defineUnary<kFloats | kSigned | kUnsigned>(d, "Shrink", [](const AttrMap& a) {
        const double bias = a.get<double>("bias"), lambd = a.get<double>("lambd");
        return [bias, lambd](auto x) {
          const double v = static_cast<double>(x);
          return v < -lambd ? v + bias : v > lambd ? v - bias : 0.0;
        };
      });
    });
}  // namespace opforge::ops
