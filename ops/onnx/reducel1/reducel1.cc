// ONNX ReduceL1: Sum of absolute values over the given axes (see common/reduce.h for axes, keepdims
// and empty sets).
#include "../common/reduce.h"

namespace opforge::ops {
OPFORGE_OP(ReduceL1, "ai.onnx::ReduceL1")
    .doc("Sum of absolute values over axes.")
    .with(reduceOp<ReduceKind::kL1, kNumeric>("ReduceL1"));
}  // namespace opforge::ops
