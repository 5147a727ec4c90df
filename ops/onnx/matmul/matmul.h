// matmul.h — ONNX MatMul's CPU reference, for the references of fused ops that contain a MatMul
// (opforge::FusedAttention's two products).
#pragma once

#include "opforge/op.h"

namespace opforge::ops {

// y = a b with numpy matmul semantics (1-D operands promoted, batch axes broadcast), as MatMul's
// reference (matmul.cc): FP32 on sgemm, FP16/BF16 widened to float, FP64 and integers on the naive
// loop accumulating in double / 64 bits. a and b have one type, y that type and MatMul's shape.
Status matmulReference(const Tensor& a, const Tensor& b, const Tensor& y);

// The dims of numpy matmul(a, b) (MatMul's shape rule without its type checks; also the integer
// and quantized products'): a named error for scalars and unequal inner dims.
Result<std::vector<DimExpr>> matmulDims(ShapeContext& c, const SymDesc& a, const SymDesc& b);

}  // namespace opforge::ops
