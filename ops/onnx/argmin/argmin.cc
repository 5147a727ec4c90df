// ONNX ArgMin: index of the smallest value along an axis.
#include "../common/argreduce.h"

namespace opforge::ops {
OPFORGE_OP(ArgMin, "ai.onnx::ArgMin")
    .doc("Index of the minimum along axis.")
    .with(argReduceOp<false>("ArgMin"));
}  // namespace opforge::ops
