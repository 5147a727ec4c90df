// ONNX ReduceProd: Product over the given axes (see common/reduce.h for axes, keepdims and empty
// sets).
#include "../common/reduce.h"

namespace opforge::ops {
OPFORGE_OP(ReduceProd, "ai.onnx::ReduceProd")
    .doc("Product over axes.")
    .with(reduceOp<ReduceKind::kProd, kNumeric>("ReduceProd"));
}  // namespace opforge::ops
