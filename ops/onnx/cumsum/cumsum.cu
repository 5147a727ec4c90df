// CUDA tactics of ai.onnx::CumSum: a thread per line, or a block per line with cub::BlockScan
// (common/cumulative_cuda.cuh); the axis is read on the device.
#include "../common/cumulative_cuda.cuh"

namespace opforge::ops {

OPFORGE_TACTICS("ai.onnx::CumSum", scanTactics<false>("CumSum"));

}  // namespace opforge::ops
