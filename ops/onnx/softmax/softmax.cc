// ONNX Softmax: exp(x - max) / sum(exp(x - max)) along an axis (see common/softmax.h for opsets).
#include "../common/softmax.h"

namespace opforge::ops {
OPFORGE_OP(Softmax, "ai.onnx::Softmax")
    .doc("Softmax along axis.")
    .with(softmaxOp<SoftmaxKind::kSoftmax>("Softmax"));
}  // namespace opforge::ops
