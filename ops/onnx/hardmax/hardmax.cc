// ONNX Hardmax: 1 at the first maximum along an axis, 0 elsewhere (see common/softmax.h).
#include "../common/softmax.h"

namespace opforge::ops {
OPFORGE_OP(Hardmax, "ai.onnx::Hardmax")
    .doc("One-hot of the maximum along axis.")
    .with(softmaxOp<SoftmaxKind::kHardmax>("Hardmax"));
}  // namespace opforge::ops
