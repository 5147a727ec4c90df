// CUDA tactics of ai.onnx::CumProd: a thread per line, or a block per line with cub::BlockScan
// (common/cumulative_cuda.cuh); the axis is read on the device.
#include "../common/cumulative_cuda.cuh"

namespace opforge::ops {

OPFORGE_TACTICS("ai.onnx::CumProd", scanTactics<true>("CumProd"));

}  // namespace opforge::ops
