// ONNX BitwiseXor: elementwise bitwise xor of integers with numpy broadcasting.
#include "../common/binary.h"

namespace opforge::ops {
OPFORGE_OP(BitwiseXor, "ai.onnx::BitwiseXor")
    .doc("Elementwise bitwise xor with numpy broadcasting.")
    .with(binaryOp<kSigned | kUnsigned>("BitwiseXor", [](auto x, auto y) {
      using C = decltype(x);
      return static_cast<C>(x ^ y);
    }));
}  // namespace opforge::ops
