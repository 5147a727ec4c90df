// ONNX ReduceSumSquare: Sum of squares over the given axes (see common/reduce.h for axes, keepdims
// and empty sets).
#include "../common/reduce.h"

namespace opforge::ops {
OPFORGE_OP(ReduceSumSquare, "ai.onnx::ReduceSumSquare")
    .doc("Sum of squares over axes.")
    .with(reduceOp<ReduceKind::kSumSquare, kNumeric>("ReduceSumSquare"));
}  // namespace opforge::ops
