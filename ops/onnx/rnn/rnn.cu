// CUDA tactics of ai.onnx::RNN (common/recurrent_cuda.cuh):
//   1 cuda.recurrent  a block per (direction, batch row) runs every step, warp-per-gate-row dots;
//   2 cuda.gemm       X W^T of all steps as one GEMM per direction (float for FP16/BF16),
//                     then the same per-step kernel;
//   3 cuda.steps      the same projection, then a kernel per time step over the whole GPU.
#include "../common/recurrent_cuda.cuh"

namespace opforge::ops {

OPFORGE_TACTICS("ai.onnx::RNN", [](OpDef& d) { RnnTactics<RnnCell::kRnn>::addAll(d); });

}  // namespace opforge::ops
