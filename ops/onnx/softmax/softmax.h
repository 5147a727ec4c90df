// softmax.h — ONNX Softmax's CPU reference, for the references of fused ops that contain a Softmax
// (opforge::FusedAttention).
#pragma once

#include "opforge/op.h"

namespace opforge::ops {

// y = softmax(x) along `axis` (opset 13 and later; may be negative), in double with one rounding
// to x's type (Softmax's reference, softmax.cc; a NaN makes its row NaN). y may be x.
Status softmaxReference(int64_t axis, const Tensor& x, const Tensor& y);

}  // namespace opforge::ops
