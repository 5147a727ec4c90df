// gemm_act.cuh — the activation the GEMM kernels (gemm_cuda.cu, gemm_mma.cu) apply to a product
// element of storage type S computed in T.
#pragma once

#include <type_traits>

#include "activation.h"

namespace opforge::ops {

// For the erf GELU of 16-bit data, 1 + erf(z) directly: erff takes about half the instructions of
// the erfc form the reference uses for the negative tail, and its absolute error there (about 1e-7)
// is far below FP16's and BF16's rounding; it made the GELU after ViT-B/16's first MLP GEMM
// compute-bound.
template <typename S, typename T>
__device__ __forceinline__ T gemmAct(T v, Act act) {
  if constexpr (sizeof(S) == 2 && std::is_same_v<T, float>) {
    if (act == Act::kGelu) return 0.5f * v * (1.f + erff(v * 0.70710678118654752f));
  }
  return applyAct(v, act);
}

}  // namespace opforge::ops
