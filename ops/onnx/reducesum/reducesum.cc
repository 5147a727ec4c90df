// ONNX ReduceSum: Sum over the given axes (see common/reduce.h for axes, keepdims and empty sets).
#include "../common/reduce.h"

namespace opforge::ops {
OPFORGE_OP(ReduceSum, "ai.onnx::ReduceSum")
    .doc("Sum over axes.")
    .with(reduceOp<ReduceKind::kSum, kNumeric>("ReduceSum"));
}  // namespace opforge::ops
