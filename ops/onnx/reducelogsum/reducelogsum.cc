// ONNX ReduceLogSum: Log of the sum over the given axes (see common/reduce.h for axes, keepdims and
// empty sets).
#include "../common/reduce.h"

namespace opforge::ops {
OPFORGE_OP(ReduceLogSum, "ai.onnx::ReduceLogSum")
    .doc("Log of the sum over axes.")
    .with(reduceOp<ReduceKind::kLogSum, kFloats>("ReduceLogSum"));
}  // namespace opforge::ops
