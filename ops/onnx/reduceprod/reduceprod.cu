// CUDA tactics of ai.onnx::ReduceProd: a block, a warp or a thread per output element
// (common/reduce_cuda.cuh); axes from the attribute, or from the input on the device.
#include "../common/reduce_cuda.cuh"

namespace opforge::ops {

OPFORGE_TACTICS("ai.onnx::ReduceProd", reduceTactics<ReduceKind::kProd, kNumeric>("ReduceProd"));

}  // namespace opforge::ops
