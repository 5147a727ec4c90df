// CUDA tactics of ai.onnx::ArgMin: a thread per line, or a warp per line when the axis is innermost
// (common/argreduce_cuda.cuh).
#include "../common/argreduce_cuda.cuh"

namespace opforge::ops {

OPFORGE_TACTICS("ai.onnx::ArgMin", argTactics<false>("ArgMin"));

}  // namespace opforge::ops
