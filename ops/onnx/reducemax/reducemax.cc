// ONNX ReduceMax: Maximum over the given axes (see common/reduce.h for axes, keepdims and empty
// sets).
#include "../common/reduce.h"

namespace opforge::ops {
OPFORGE_OP(ReduceMax, "ai.onnx::ReduceMax")
    .doc("Maximum over axes.")
    .with(reduceOp<ReduceKind::kMax, kNumeric | kBools>("ReduceMax"));
}  // namespace opforge::ops
