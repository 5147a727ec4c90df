// silu_mul.h — the math of ext::silu_mul, shared by the CPU reference and the CUDA tactic.
#pragma once

#include <cmath>

#ifdef __CUDACC__
#define EXT_HD __host__ __device__
#else
#define EXT_HD
#endif

namespace ext {

// SiLU(a) * b = a * sigmoid(a) * b, computed in float (double for FP64 callers).
template <typename T>
EXT_HD inline T siluMul(T a, T b) {
  return a / (T(1) + std::exp(-a)) * b;
}

}  // namespace ext
