// ONNX BitwiseAnd: elementwise bitwise and of integers with numpy broadcasting.
#include "../common/binary.h"

namespace opforge::ops {
OPFORGE_OP(BitwiseAnd, "ai.onnx::BitwiseAnd")
    .doc("Elementwise bitwise and with numpy broadcasting.")
    .with(binaryOp<kSigned | kUnsigned>("BitwiseAnd", [](auto x, auto y) {
      using C = decltype(x);
      return static_cast<C>(x & y);
    }));
}  // namespace opforge::ops
