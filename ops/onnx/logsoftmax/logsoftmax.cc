// ONNX LogSoftmax: x - max - log(sum(exp(x - max))) along an axis (see common/softmax.h).
#include "../common/softmax.h"

namespace opforge::ops {
OPFORGE_OP(LogSoftmax, "ai.onnx::LogSoftmax")
    .kind("softmax")
    .doc("Log of the softmax along axis.")
    .with(softmaxOp<SoftmaxKind::kLogSoftmax>("LogSoftmax"));
}  // namespace opforge::ops
