// gemm_act.cuh — the activation the GEMM kernels (gemm_cuda.cu, gemm_mma.cu, gemm_skinny.cu) and
// the depthwise convolutions (conv_depthwise.cu) apply to an element of storage type S computed in
// T.
#pragma once

#include <type_traits>

#include "activation.h"

namespace opforge::ops {

// For 16-bit data, cheaper forms whose error is far below FP16's and BF16's rounding:
// - the erf GELU as 1 + erf(z) directly: erff takes about half the instructions of the erfc form
//   the reference uses for the negative tail (absolute error there about 1e-7); it made the GELU
//   after ViT-B/16's first MLP GEMM compute-bound;
// - SiLU as v / (1 + e^-v) with the hardware exponential and the approximate division (relative
//   error about 2^-21; the reference's expf and IEEE division take several times the
//   instructions, and EfficientNet's expansion GEMMs and depthwise layers are issue-bound). Where
//   1 + e^-v exceeds 2^126 (v < -87) __fdividef gives 0, which v e^v rounds to in 16 bits anyway.
template <typename S, typename T>
__device__ __forceinline__ T gemmAct(T v, Act act) {
  if constexpr (sizeof(S) == 2 && std::is_same_v<T, float>) {
    if (act == Act::kGelu) return 0.5f * v * (1.f + erff(v * 0.70710678118654752f));
    if (act == Act::kSilu) return __fdividef(v, 1.f + __expf(-v));
  }
  return applyAct(v, act);
}

}  // namespace opforge::ops
