// CUDA tactics of ai.onnx::GlobalMaxPool: a block, a warp or a thread per (n, c) plane
// (common/global_pool_cuda.cuh).
#include "../common/global_pool_cuda.cuh"

namespace opforge::ops {

OPFORGE_TACTICS("ai.onnx::GlobalMaxPool", globalPoolTactics<ReduceKind::kMax>("GlobalMaxPool"));

}  // namespace opforge::ops
