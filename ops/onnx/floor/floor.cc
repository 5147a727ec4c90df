// ONNX Floor: floor, elementwise.
#include "../common/unary.h"

namespace opforge::ops {
OPFORGE_OP(Floor, "ai.onnx::Floor")
    .doc("Elementwise floor.")
    .with(unaryOp<kFloats>("Floor", [](auto x) {
      using C = decltype(x);
      return static_cast<C>(std::floor(x));
    }));
}  // namespace opforge::ops
