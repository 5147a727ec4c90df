// CUDA tactics of ai.onnx::ReduceSum: a block, a warp or a thread per output element
// (common/reduce_cuda.cuh); axes from the attribute, or from the input on the device.
#include "../common/reduce_cuda.cuh"

namespace opforge::ops {

OPFORGE_TACTICS("ai.onnx::ReduceSum", reduceTactics<ReduceKind::kSum, kNumeric>("ReduceSum"));

}  // namespace opforge::ops
