// ONNX BitwiseOr: elementwise bitwise or of integers with numpy broadcasting.
#include "../common/binary.h"

namespace opforge::ops {
OPFORGE_OP(BitwiseOr, "ai.onnx::BitwiseOr")
    .doc("Elementwise bitwise or with numpy broadcasting.")
    .with(binaryOp<kSigned | kUnsigned>("BitwiseOr", [](auto x, auto y) {
      using C = decltype(x);
      return static_cast<C>(x | y);
    }));
}  // namespace opforge::ops
