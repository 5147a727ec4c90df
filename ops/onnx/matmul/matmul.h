// matmul.h — ONNX MatMul's CPU reference, for the references of fused ops that contain a MatMul
// (opforge::FusedAttention's two products).
#pragma once

#include "opforge/op.h"

namespace opforge::ops {

// y = a b with numpy matmul semantics (1-D operands promoted, batch axes broadcast), as MatMul's
// reference (matmul.cc): FP32 on sgemm, FP16/BF16 widened to float, FP64 and integers on the naive
// loop accumulating in double / 64 bits. a and b have one type, y that type and MatMul's shape.
Status matmulReference(const Tensor& a, const Tensor& b, const Tensor& y);

}  // namespace opforge::ops
