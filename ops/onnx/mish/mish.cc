// ONNX Mish: x * tanh(softplus(x)).
#include "../common/unary.h"

namespace opforge::ops {
OPFORGE_OP(Mish, "ai.onnx::Mish")
    .doc("Elementwise x * tanh(log(1 + exp(x))).")
    .with(unaryOp<kFloats>("Mish", [](auto x) {
      using C = decltype(x);
      const C sp = (x > C(0) ? x : C(0)) + std::log1p(std::exp(-std::fabs(x)));
      return static_cast<C>(x * std::tanh(sp));
    }));
}  // namespace opforge::ops
