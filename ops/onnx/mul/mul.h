// mul.h — ONNX Mul's CPU reference, for the references of fused ops that contain a Mul
// (opforge::FusedAttention's scale, opforge::FusedGeluChain's mul stage).
#pragma once

#include "../common/wrap.h"
#include "opforge/op.h"

namespace opforge::ops {

// Mul's elementwise function, in the compute type (integers wrap).
inline constexpr auto kMulFn = [](auto x, auto y) { return wrapMul(x, y); };

// y = a * b with numpy broadcasting, in a's compute type (Mul's reference, mul.cc). a and b have
// one numeric type, y that type and the broadcast shape; y may be a (same shape).
Status mulReference(const Tensor& a, const Tensor& b, const Tensor& y);

}  // namespace opforge::ops
