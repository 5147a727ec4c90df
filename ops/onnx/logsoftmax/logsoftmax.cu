// CUDA tactics of ai.onnx::LogSoftmax: a warp or a block per row (axis innermost) or a thread per
// column (common/softmax_cuda.cuh).
#include "../common/softmax_cuda.cuh"

namespace opforge::ops {

OPFORGE_TACTICS("ai.onnx::LogSoftmax", softmaxTactics<SoftmaxKind::kLogSoftmax>("LogSoftmax"));

}  // namespace opforge::ops
