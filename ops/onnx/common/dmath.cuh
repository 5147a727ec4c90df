// dmath.cuh — float/double overloads of the math functions the elementwise ops use on the device
// (full-precision CUDA math library, no fast-math intrinsics), so one templated functor serves
// FP32 (and FP16/BF16, computed in float) and FP64.
#pragma once

#include <cuda_runtime.h>

#include <type_traits>

namespace opforge::ops::dm {

#define OPFORGE_DM1(name, f32, f64)                  \
  __device__ __forceinline__ float name(float x) {   \
    return ::f32(x);                                 \
  }                                                  \
  __device__ __forceinline__ double name(double x) { \
    return ::f64(x);                                 \
  }
OPFORGE_DM1(exp, expf, exp)
OPFORGE_DM1(expm1, expm1f, expm1)
OPFORGE_DM1(log, logf, log)
OPFORGE_DM1(log1p, log1pf, log1p)
OPFORGE_DM1(sqrt, sqrtf, sqrt)
OPFORGE_DM1(erf, erff, erf)
OPFORGE_DM1(tanh, tanhf, tanh)
OPFORGE_DM1(sin, sinf, sin)
OPFORGE_DM1(cos, cosf, cos)
OPFORGE_DM1(tan, tanf, tan)
OPFORGE_DM1(asin, asinf, asin)
OPFORGE_DM1(acos, acosf, acos)
OPFORGE_DM1(atan, atanf, atan)
OPFORGE_DM1(sinh, sinhf, sinh)
OPFORGE_DM1(cosh, coshf, cosh)
OPFORGE_DM1(asinh, asinhf, asinh)
OPFORGE_DM1(acosh, acoshf, acosh)
OPFORGE_DM1(atanh, atanhf, atanh)
OPFORGE_DM1(floor, floorf, floor)
OPFORGE_DM1(ceil, ceilf, ceil)
OPFORGE_DM1(rint, rintf, rint)
OPFORGE_DM1(fabs, fabsf, fabs)
#undef OPFORGE_DM1

__device__ __forceinline__ float pow(float x, float y) {
  return ::powf(x, y);
}
__device__ __forceinline__ double pow(double x, double y) {
  return ::pow(x, y);
}
__device__ __forceinline__ float fmod(float x, float y) {
  return ::fmodf(x, y);
}
__device__ __forceinline__ double fmod(double x, double y) {
  return ::fmod(x, y);
}
// Python's / numpy's floating-point modulo (ONNX Mod with fmod = 0): the sign of the divisor,
// a zero result carries the divisor's sign, x mod inf is x or inf by sign.
template <typename F>
__device__ __forceinline__ F floorMod(F x, F y) {
  F r = fmod(x, y);
  if (r != F(0)) {
    if ((r < F(0)) != (y < F(0))) r += y;
  } else {
    r = y < F(0) ? -F(0) : F(0);  // y is not NaN here (fmod(x, NaN) is NaN)
  }
  return r;
}

// std::min / std::max exactly (NaN handling included): min(a, b) = b < a ? b : a.
template <typename T>
__device__ __forceinline__ T dmin(T a, T b) {
  return b < a ? b : a;
}
template <typename T>
__device__ __forceinline__ T dmax(T a, T b) {
  return a < b ? b : a;
}

template <typename T>
__device__ __forceinline__ bool isnan(T x) {
  if constexpr (std::is_floating_point_v<T>)
    return x != x;
  else
    return false;
}
template <typename T>
__device__ __forceinline__ bool isinf(T x) {
  if constexpr (std::is_same_v<T, float>)
    return ::isinf(x);
  else if constexpr (std::is_same_v<T, double>)
    return ::isinf(x);
  else
    return false;
}

}  // namespace opforge::ops::dm

namespace opforge::ops {
using dm::dmax;
using dm::dmin;
}  // namespace opforge::ops
