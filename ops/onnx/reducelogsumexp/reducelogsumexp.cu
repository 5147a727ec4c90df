// CUDA tactics of ai.onnx::ReduceLogSumExp: a block, a warp or a thread per output element
// (common/reduce_cuda.cuh); axes from the attribute, or from the input on the device.
#include "../common/reduce_cuda.cuh"

namespace opforge::ops {

OPFORGE_TACTICS("ai.onnx::ReduceLogSumExp",
                reduceTactics<ReduceKind::kLogSumExp, kFloats>("ReduceLogSumExp"));

}  // namespace opforge::ops
