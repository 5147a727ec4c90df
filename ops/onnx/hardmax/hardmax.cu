// CUDA tactics of ai.onnx::Hardmax: a warp or a block per row (axis innermost) or a thread per
// column (common/softmax_cuda.cuh).
#include "../common/softmax_cuda.cuh"

namespace opforge::ops {

OPFORGE_TACTICS("ai.onnx::Hardmax", softmaxTactics<SoftmaxKind::kHardmax>("Hardmax"));

}  // namespace opforge::ops
