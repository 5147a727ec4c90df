// ONNX HardSwish: x * max(0, min(1, x / 6 + 1/2)).
#include <algorithm>

#include "../common/unary.h"

namespace opforge::ops {
OPFORGE_OP(HardSwish, "ai.onnx::HardSwish")
    .doc("Elementwise x * max(0, min(1, x / 6 + 0.5)).")
    .with(unaryOp<kFloats>("HardSwish", [](auto x) {
      using C = decltype(x);
      const C v = x / C(6) + C(0.5);
      return static_cast<C>(x * std::max(C(0), std::min(C(1), v)));
    }));
}  // namespace opforge::ops
