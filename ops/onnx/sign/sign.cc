// ONNX Sign: -1, 0 or 1 by the sign of x (NaN stays NaN).
#include "../common/unary.h"

namespace opforge::ops {
OPFORGE_OP(Sign, "ai.onnx::Sign")
    .doc("Elementwise sign: -1, 0 or 1.")
    .with(unaryOp<kNumeric>("Sign", [](auto x) {
      using C = decltype(x);
      if constexpr (std::is_floating_point_v<C>)
        if (std::isnan(x)) return x;
      return static_cast<C>((C(0) < x) - (x < C(0)));
    }));
}  // namespace opforge::ops
