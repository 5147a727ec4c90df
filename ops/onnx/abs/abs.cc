// ONNX Abs: |x|, elementwise (unsigned values are returned as they are).
#include "../common/unary.h"

namespace opforge::ops {
OPFORGE_OP(Abs, "ai.onnx::Abs")
    .doc("Elementwise absolute value.")
    .with(unaryOp<kNumeric>("Abs", [](auto x) {
      using C = decltype(x);
      if constexpr (std::is_unsigned_v<C>)
        return x;
      else
        return static_cast<C>(x < C(0) ? -x : x);
    }));
}  // namespace opforge::ops
