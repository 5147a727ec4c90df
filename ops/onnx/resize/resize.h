// resize.h — ONNX Resize's CPU reference and CUDA tactics as functions of an attribute map, for
// ops that are a Resize with fixed attributes (ai.onnx::Upsample runs them with the attributes of
// an opset-10 Resize: asymmetric coordinates, floor for nearest, inputs (X, scales)).
#pragma once

#include <optional>

#include "opforge/op.h"

namespace opforge::ops {

// floor(in * scale): for a symbolic `in` when the scale is an exact small fraction p / q, for a
// constant `in` any scale. Errors (naming the scale): a scale that is not a positive finite
// number, a symbolic `in` with another scale, a constant result over 2^40 (kMaxElements).
Result<DimExpr> resizeScaledDim(const DimExpr& in, double scale);

// Resize's reference (resize.cc) with the attributes `at` (every attribute Resize declares).
Status resizeReference(const AttrMap& at, std::span<const Tensor> in, std::span<const Tensor> out);

// Resize's CUDA tactics 1 cuda.taps and 2 cuda.rows, their applies and workspace functions
// (resize.cu; CUDA builds only). They read the attributes from the context.
Status resizeCudaTaps(KernelContext& k, std::span<const Tensor> in, std::span<const Tensor> out);
Status resizeCudaRows(KernelContext& k, std::span<const Tensor> in, std::span<const Tensor> out);
bool resizeCudaApplies(const AttrMap& a, std::span<const TensorDesc> in,
                       std::span<const TensorDesc> out);
bool resizeCudaRowsApplies(const AttrMap& a, std::span<const TensorDesc> in,
                           std::span<const TensorDesc> out);
size_t resizeCudaWorkspace(const AttrMap& a, std::span<const TensorDesc> in,
                           std::span<const TensorDesc> out);

}  // namespace opforge::ops
