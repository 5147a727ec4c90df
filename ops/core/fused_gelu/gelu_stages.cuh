// gelu_stages.cuh — device math of the fused GELU stages (forward and derivative), shared by the
// CUDA tactics of opforge::FusedGeluChain, opforge::FusedGelu and opforge::FusedGeluGrad.
//
// fp32 uses branch-free forms built on the hardware exp2/rcp units (ftz: about 20 instructions per
// erf GELU), so that two GELUs per element stay near the memory time of one pass
// (bench/gpu/NOTES.md):
//   gelu(x)      = x Phi(x), Phi(x) = 1 - q (x >= 0) or q (x < 0), q = erfc(|x|/sqrt2)/2 with
//                  erfc(z) = t exp(-z^2 + P(t)), t = 1/(1 + z/2) (Numerical Recipes' erfcc,
//                  relative error < 1.2e-7 for every z >= 0), evaluated in base 2; max abs error of
//                  gelu in fp32 on a dense grid of [-12, 12]: 3.8e-7 (outputs below 2^-126 flush to
//                  zero);
//   gelu_tanh(x) = 0.5 x (1 + tanh(z)) = x / (1 + exp(-2z)), z = sqrt(2/pi)(x + 0.044715 x^3).
// fp64 uses the engine's epilogue activations (opforge/epilogue.h: the CUDA math library's erfc,
// tanh, exp) and the float64 derivatives of gelu_stages.h.
#pragma once

#include "../../common/vec.cuh"
#include "gelu_stages.h"

namespace opforge::gelu::cu {
using namespace ::opforge::cuvec;

// The hardware's approximate reciprocal and base-2 exponential, flushing subnormals (one MUFU
// instruction each; the non-ftz forms add range fix-ups around it).
__device__ __forceinline__ float rcpApproxF(float x) {
  float r;
  asm("rcp.approx.ftz.f32 %0, %1;" : "=f"(r) : "f"(x));
  return r;
}
__device__ __forceinline__ float ex2ApproxF(float x) {
  float r;
  asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(r) : "f"(x));
  return r;
}
// Standard normal CDF. With z = |x|/sqrt2 and t = 1/(1 + z/2), erfc(z)/2 = t exp(-z^2 + P(t)) / 2
// = t 2^(log2(e) P(t) - 1 - log2(e) x^2 / 2): the coefficients below are erfcc's times log2(e),
// the last one less 1 (the factor 1/2).
__device__ __forceinline__ float phiF(float x) {
  constexpr float L = 1.4426950408889634f;
  const float t =
      rcpApproxF(fmaf(fabsf(x), 0.35355339059327373f, 1.f));  // 1 / (1 + |x| / (2 sqrt2))
  float p = 0.17087277f * L;
  p = fmaf(p, t, -0.82215223f * L);
  p = fmaf(p, t, 1.48851587f * L);
  p = fmaf(p, t, -1.13520398f * L);
  p = fmaf(p, t, 0.27886807f * L);
  p = fmaf(p, t, -0.18628806f * L);
  p = fmaf(p, t, 0.09678418f * L);
  p = fmaf(p, t, 0.37409196f * L);
  p = fmaf(p, t, 1.00002368f * L);
  p = fmaf(p, t, -1.26551223f * L - 1.f);
  const float q = t * ex2ApproxF(fmaf(x * (-0.5f * L), x, p));  // erfc(|x| / sqrt2) / 2
  return x >= 0.f ? 1.f - q : q;
}
__device__ __forceinline__ float sigmoidF(float v) {
  return __fdividef(1.f, 1.f + __expf(-v));
}
__device__ __forceinline__ float geluTanhArgF(float x) {  // 2 sqrt(2/pi) (x + 0.044715 x^3)
  return static_cast<float>(2 * kSqrt2OverPi) * fmaf(static_cast<float>(kGeluKappa) * x, x * x, x);
}

__device__ __forceinline__ float stageF(int32_t code, float v, float c) {
  switch (code) {
    case kStageGelu:
      return v * phiF(v);
    case kStageGeluTanh:
      return __fdividef(v, 1.f + __expf(-geluTanhArgF(v)));
    case kStageRelu:
      return v < 0.f ? 0.f : v;
    case kStageTanh:
      return tanhf(v);
    case kStageSigmoid:
      return sigmoidF(v);
    case kStageMul:
      return v * c;
    case kStageAdd:
      return v + c;
    case kStageDiv:
      return v / c;
    default:
      return v;
  }
}
__device__ __forceinline__ float stageGradF(int32_t code, float v, float c) {
  switch (code) {
    case kStageGelu:
      return phiF(v) + v * static_cast<float>(kInvSqrt2Pi) * __expf(-0.5f * v * v);
    case kStageGeluTanh: {  // s + 2 x s (1 - s) sqrt(2/pi) (1 + 3 kappa x^2), s = sigmoid(2z)
      const float s = sigmoidF(geluTanhArgF(v));
      return s + 2.f * v * s * (1.f - s) * static_cast<float>(kSqrt2OverPi) *
                     fmaf(static_cast<float>(3 * kGeluKappa) * v, v, 1.f);
    }
    case kStageRelu:
      return v > 0.f ? 1.f : 0.f;
    case kStageTanh: {
      const float t = tanhf(v);
      return 1.f - t * t;
    }
    case kStageSigmoid: {
      const float s = sigmoidF(v);
      return s * (1.f - s);
    }
    case kStageMul:
      return c;
    case kStageAdd:
      return 1.f;
    case kStageDiv:
      return 1.f / c;
    default:
      return 1.f;
  }
}

// FP64: the engine's epilogue activations (opforge/epilogue.h, the CUDA math library's erfc, tanh,
// exp) and the derivatives of gelu_stages.h.
__device__ __forceinline__ double stageF(int32_t code, double v, double c) {
  switch (code) {
    case kStageGelu:
      return applyActivation(v, Activation::kGelu);
    case kStageGeluTanh:
      return applyActivation(v, Activation::kGeluTanh);
    case kStageRelu:
      return applyActivation(v, Activation::kRelu);
    case kStageTanh:
      return applyActivation(v, Activation::kTanh);
    case kStageSigmoid:
      return applyActivation(v, Activation::kSigmoid);
    case kStageMul:
      return v * c;
    case kStageAdd:
      return v + c;
    case kStageDiv:
      return v / c;
    default:
      return v;
  }
}
__device__ __forceinline__ double stageGradF(int32_t code, double v, double c) {
  return stageGradRef(code, v, c);
}

// Applies every stage to K values. The switch is taken once per stage for all K values (the code
// is uniform across the grid), so the interpreter costs little next to the math.
template <int K, typename C>
__device__ __forceinline__ void applyStages(C (&v)[K], const GeluStages& s) {
  for (int k = 0; k < s.n; ++k) {
    const int32_t code = s.code[k];
    const C c = static_cast<C>(s.scalar[k]);
    switch (code) {
      case kStageGelu:
#pragma unroll
        for (int e = 0; e < K; ++e) v[e] = stageF(kStageGelu, v[e], c);
        break;
      case kStageGeluTanh:
#pragma unroll
        for (int e = 0; e < K; ++e) v[e] = stageF(kStageGeluTanh, v[e], c);
        break;
      default:
#pragma unroll
        for (int e = 0; e < K; ++e) v[e] = stageF(code, v[e], c);
        break;
    }
  }
}

// g = dy/dx of the whole list at v (v is overwritten with the forward value).
template <int K, typename C>
__device__ __forceinline__ void applyStageGrads(C (&v)[K], C (&g)[K], const GeluStages& s) {
#pragma unroll
  for (int e = 0; e < K; ++e) g[e] = C(1);
  for (int k = 0; k < s.n; ++k) {
    const int32_t code = s.code[k];
    const C c = static_cast<C>(s.scalar[k]);
#pragma unroll
    for (int e = 0; e < K; ++e) {
      g[e] *= stageGradF(code, v[e], c);
      v[e] = stageF(code, v[e], c);
    }
  }
}

}  // namespace opforge::gelu::cu
