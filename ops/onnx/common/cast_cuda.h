// cast_cuda.h — element type conversion on the device, shared by Cast and CastLike (and any tactic
// that needs a dtype change). Same rules as common/convert.h: float to integer truncates toward
// zero and saturates, NaN becomes 0; to BOOL: non-zero (and NaN) is true; integer to integer is
// exact and wraps; everything else goes through double (FP64 to FP16/BF16 rounds via FP32).
#pragma once

#include "opforge/op.h"

namespace opforge::ops {

// y = cast(x) on `stream` (a cudaStream_t); x and y have the same element count.
Status castDevice(const Tensor& x, const Tensor& y, void* stream, const char* op);

// The applies() of the Cast / CastLike tactics: LINEAR tensors of the types castDevice converts
// (not FP8, which only the CPU references convert).
bool castApplies(const AttrMap& a, std::span<const TensorDesc> in, std::span<const TensorDesc> out);

}  // namespace opforge::ops
