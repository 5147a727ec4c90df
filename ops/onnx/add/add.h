// add.h — ONNX Add's CPU reference, for the references of fused ops that contain an Add
// (opforge::FusedAddLayerNorm, FusedConv's residual, FusedMatMul's bias, the fused GELU's add
// stage).
#pragma once

#include "../common/wrap.h"
#include "opforge/op.h"

namespace opforge::ops {

// Add's elementwise function, in the compute type (integers wrap).
inline constexpr auto kAddFn = [](auto x, auto y) { return wrapAdd(x, y); };

// y = a + b with numpy broadcasting, in a's compute type (Add's reference, add.cc). a and b have
// one numeric type, y that type and the broadcast shape; y may be a (same shape) for an in-place
// add.
Status addReference(const Tensor& a, const Tensor& b, const Tensor& y);

}  // namespace opforge::ops
