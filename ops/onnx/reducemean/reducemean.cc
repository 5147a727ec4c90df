// ONNX ReduceMean: Mean over the given axes (see common/reduce.h for axes, keepdims and empty
// sets).
#include "../common/reduce.h"

namespace opforge::ops {
OPFORGE_OP(ReduceMean, "ai.onnx::ReduceMean")
    .doc("Mean over axes.")
    .with(reduceOp<ReduceKind::kMean, kNumeric>("ReduceMean"));
}  // namespace opforge::ops
