// ONNX Sigmoid: 1 / (1 + e^-x), written so that e^x never overflows.
#include "../common/unary.h"

namespace opforge::ops {
OPFORGE_OP(Sigmoid, "ai.onnx::Sigmoid")
    .doc("Elementwise logistic function.")
    .with(unaryOp<kFloats>("Sigmoid", [](auto x) {
      using C = decltype(x);
      if (x >= C(0)) return static_cast<C>(C(1) / (C(1) + std::exp(-x)));
      const C e = std::exp(x);
      return static_cast<C>(e / (C(1) + e));
    }));
}  // namespace opforge::ops
