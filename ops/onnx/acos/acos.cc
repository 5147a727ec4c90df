// ONNX Acos: arc cosine, elementwise.
#include "../common/unary.h"

namespace opforge::ops {
OPFORGE_OP(Acos, "ai.onnx::Acos")
    .doc("Elementwise arc cosine.")
    .with(unaryOp<kFloats>("Acos", [](auto x) {
      using C = decltype(x);
      return static_cast<C>(std::acos(x));
    }));
}  // namespace opforge::ops
