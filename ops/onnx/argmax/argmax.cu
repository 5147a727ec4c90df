// CUDA tactics of ai.onnx::ArgMax: a thread per line, or a warp per line when the axis is innermost
// (common/argreduce_cuda.cuh).
#include "../common/argreduce_cuda.cuh"

namespace opforge::ops {

OPFORGE_TACTICS("ai.onnx::ArgMax", argTactics<true>("ArgMax"));

}  // namespace opforge::ops
