// ONNX ReduceMin: Minimum over the given axes (see common/reduce.h for axes, keepdims and empty
// sets).
#include "../common/reduce.h"

namespace opforge::ops {
OPFORGE_OP(ReduceMin, "ai.onnx::ReduceMin")
    .doc("Minimum over axes.")
    .with(reduceOp<ReduceKind::kMin, kNumeric | kBools>("ReduceMin"));
}  // namespace opforge::ops
