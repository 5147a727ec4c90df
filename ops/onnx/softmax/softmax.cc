// ONNX Softmax: exp(x - max) / sum(exp(x - max)) along an axis (see common/softmax.h for opsets).
#include "softmax.h"

#include "../common/softmax.h"

namespace opforge::ops {
Status softmaxReference(int64_t axis, const Tensor& x, const Tensor& y) {
  AttrMap a;
  a.set("axis", axis);
  a.set("_onnx_opset", int64_t{13});
  int64_t outer, n, inner;
  softmaxGeometry(a, x.desc.dims, &outer, &n, &inner);
  return softmaxFamilyReference<SoftmaxKind::kSoftmax>("Softmax", outer, n, inner, x, y);
}

OPFORGE_OP(Softmax, "ai.onnx::Softmax")
    .kind("softmax")
    .doc("Softmax along axis.")
    .with(softmaxOp<SoftmaxKind::kSoftmax>("Softmax"));
}  // namespace opforge::ops
