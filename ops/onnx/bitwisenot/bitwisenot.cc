// ONNX BitwiseNot: elementwise bitwise complement of integers.
#include "../common/unary.h"

namespace opforge::ops {
OPFORGE_OP(BitwiseNot, "ai.onnx::BitwiseNot")
    .doc("Elementwise bitwise not.")
    .with(unaryOp<kSigned | kUnsigned>("BitwiseNot", [](auto x) {
      using C = decltype(x);
      return static_cast<C>(~x);
    }));
}  // namespace opforge::ops
