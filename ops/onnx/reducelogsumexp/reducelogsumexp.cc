// ONNX ReduceLogSumExp: Log of the sum of exponentials over the given axes (see common/reduce.h for
// axes, keepdims and empty sets).
#include "../common/reduce.h"

namespace opforge::ops {
OPFORGE_OP(ReduceLogSumExp, "ai.onnx::ReduceLogSumExp")
    .doc("Log of the sum of exponentials over axes.")
    .with(reduceOp<ReduceKind::kLogSumExp, kFloats>("ReduceLogSumExp"));
}  // namespace opforge::ops
