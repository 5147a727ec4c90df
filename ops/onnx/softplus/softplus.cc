// ONNX Softplus: log(1 + e^x), as max(x, 0) + log1p(e^-|x|) so that it never overflows.
#include "../common/unary.h"

namespace opforge::ops {
OPFORGE_OP(Softplus, "ai.onnx::Softplus")
    .doc("Elementwise log(1 + exp(x)).")
    .with(unaryOp<kFloats>("Softplus", [](auto x) {
      using C = decltype(x);
      return static_cast<C>((x > C(0) ? x : C(0)) + std::log1p(std::exp(-std::fabs(x))));
    }));
}  // namespace opforge::ops
