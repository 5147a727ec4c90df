// ONNX Round: rounds half to even, elementwise.
#include "../common/unary.h"

namespace opforge::ops {
OPFORGE_OP(Round, "ai.onnx::Round")
    .doc("Elementwise rounds half to even.")
    .with(unaryOp<kFloats>("Round", [](auto x) {
      using C = decltype(x);
      return static_cast<C>(std::nearbyint(x));
    }));
}  // namespace opforge::ops
