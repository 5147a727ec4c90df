// ONNX ArgMax: index of the largest value along an axis.
#include "../common/argreduce.h"

namespace opforge::ops {
OPFORGE_OP(ArgMax, "ai.onnx::ArgMax")
    .doc("Index of the maximum along axis.")
    .with(argReduceOp<true>("ArgMax"));
}  // namespace opforge::ops
