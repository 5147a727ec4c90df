// ONNX Log: natural logarithm, elementwise.
#include "../common/unary.h"

namespace opforge::ops {
OPFORGE_OP(Log, "ai.onnx::Log")
    .doc("Elementwise natural logarithm.")
    .with(unaryOp<kFloats>("Log", [](auto x) {
      using C = decltype(x);
      return static_cast<C>(std::log(x));
    }));
}  // namespace opforge::ops
