// ONNX Softsign: x / (1 + |x|), elementwise.
#include "../common/unary.h"

namespace opforge::ops {
OPFORGE_OP(Softsign, "ai.onnx::Softsign")
    .doc("Elementwise x / (1 + |x|).")
    .with(unaryOp<kFloats>("Softsign", [](auto x) {
      using C = decltype(x);
      return static_cast<C>(x / (C(1) + std::fabs(x)));
    }));
}  // namespace opforge::ops
