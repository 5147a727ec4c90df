// ONNX Relu: max(x, 0), elementwise (floats and, since opset 14, signed integers).
#include <algorithm>

#include "../common/unary.h"

namespace opforge::ops {
OPFORGE_OP(Relu, "ai.onnx::Relu")
    .doc("Elementwise max(x, 0).")
    .with(unaryOp<kFloats | kSigned>("Relu", [](auto x) {
      using C = decltype(x);
      return std::max(x, C(0));  // branch-free; keeps NaN (max(a, b) is a < b ? b : a)
    }));
}  // namespace opforge::ops
