// ONNX ReduceL2: Euclidean norm over the given axes (see common/reduce.h for axes, keepdims and
// empty sets).
#include "../common/reduce.h"

namespace opforge::ops {
OPFORGE_OP(ReduceL2, "ai.onnx::ReduceL2")
    .doc("Euclidean norm over axes.")
    .with(reduceOp<ReduceKind::kL2, kNumeric>("ReduceL2"));
}  // namespace opforge::ops
