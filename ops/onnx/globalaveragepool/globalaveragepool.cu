// CUDA tactics of ai.onnx::GlobalAveragePool: a block, a warp or a thread per (n, c) plane
// (common/global_pool_cuda.cuh).
#include "../common/global_pool_cuda.cuh"

namespace opforge::ops {

OPFORGE_TACTICS("ai.onnx::GlobalAveragePool",
                globalPoolTactics<ReduceKind::kMean>("GlobalAveragePool"));

}  // namespace opforge::ops
