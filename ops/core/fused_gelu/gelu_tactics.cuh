// gelu_tactics.cuh — the CUDA tactics of a fused GELU node, shared by the engine's
// opforge::FusedGeluChain (fused_gelu.cu beside this file) and the contrib library's
// opforge::FusedGelu (ops/contrib/fused_gelu/fused_gelu.cu): each .cu file attaches them to its op
// with OPFORGE_TACTICS(key, gelu::addGeluTactics). One read and one write per element, the whole
// stage list in registers.
//   1 cuda.vec16  — 16-byte loads/stores, two vectors in flight per thread, grid-stride; a scalar
//                   head/tail when the tensor does not start on a 16-byte boundary or does not end
//                   on a vector; all-scalar when x and y are misaligned differently.
//   2 cuda.scalar — one element per thread, grid-stride (the baseline the autotuner compares).
//   3 cuda.vec16_tiles — tactic 1's kernel with one block per 512 vectors (no grid-stride round).
//   4 cuda.vec16x4_tiles — four vectors per thread, one block per 1024 vectors: more independent
//                   math between a thread's loads and stores (two erf GELUs per element cost about
//                   half the memory time of the pass in issue slots).
#pragma once

#include "gelu_stages.cuh"

namespace opforge::gelu {

namespace tactics_impl {
using cu::Pack;

constexpr int kThreads = 256;

// Head and tail elements one by one.
template <typename T>
__device__ __forceinline__ void geluRest(const T* x, T* y, int64_t n, int64_t head, int64_t nvec,
                                         const GeluStages& s) {
  using E = ops::DNum<T>;
  const int64_t rest = n - nvec * Pack<T>::N;
  const auto* xb = reinterpret_cast<const typename E::Bits*>(x);
  auto* yb = reinterpret_cast<typename E::Bits*>(y);
  for (int64_t r = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; r < rest;
       r += int64_t(gridDim.x) * blockDim.x) {
    const int64_t i = r < head ? r : r + nvec * Pack<T>::N;
    typename E::C v[1] = {E::loadBits(xb[i])};
    cu::applyStages(v, s);
    yb[i] = E::storeBits(v[0]);
  }
}

// Elements [head, head + nvec * N) as vectors; [0, head) and [head + nvec * N, n) one by one.
template <typename T, int kUnroll>
__global__ void __launch_bounds__(kThreads)
    geluVecKernel(const T* x, T* y, int64_t n, int64_t head, int64_t nvec, const GeluStages s) {
  using E = ops::DNum<T>;
  using C = typename E::C;
  using P = Pack<T>;
  constexpr int N = P::N;
  const auto* xv = reinterpret_cast<const uint4*>(x + head);
  auto* yv = reinterpret_cast<uint4*>(y + head);
  const int64_t nthreads = int64_t(gridDim.x) * blockDim.x;
  for (int64_t base = blockIdx.x * int64_t(blockDim.x) * kUnroll + threadIdx.x; base < nvec;
       base += nthreads * kUnroll) {
    P p[kUnroll];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      const int64_t i = base + int64_t(u) * blockDim.x;
      if (i < nvec) p[u].u = xv[i];
    }
    C v[kUnroll * N];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u)
#pragma unroll
      for (int e = 0; e < N; ++e) v[u * N + e] = E::loadBits(p[u].b[e]);
    cu::applyStages(v, s);
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      const int64_t i = base + int64_t(u) * blockDim.x;
      if (i < nvec) {
#pragma unroll
        for (int e = 0; e < N; ++e) p[u].b[e] = E::storeBits(v[u * N + e]);
        yv[i] = p[u].u;
      }
    }
  }
  geluRest(x, y, n, head, nvec, s);
}

template <typename T>
__global__ void __launch_bounds__(kThreads)
    geluScalarKernel(const T* x, T* y, int64_t n, const GeluStages s) {
  using E = ops::DNum<T>;
  const auto* xb = reinterpret_cast<const typename E::Bits*>(x);
  auto* yb = reinterpret_cast<typename E::Bits*>(y);
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n;
       i += int64_t(gridDim.x) * blockDim.x) {
    typename E::C v[1] = {E::loadBits(xb[i])};
    cu::applyStages(v, s);
    yb[i] = E::storeBits(v[0]);
  }
}

enum class VecMode { kFill, kTiles, kTiles4 };

template <VecMode kMode>
Status geluVec(KernelContext& ctx, std::span<const Tensor> in, std::span<const Tensor> out) {
  const int64_t n = in[0].numel();
  if (n == 0) return Status::ok();
  const GeluStages s = geluStages(ctx.attrs());
  return ops::visitDevice<ops::kFloats>(in[0].desc.dtype, "FusedGelu", [&](auto tag) -> Status {
    using T = typename decltype(tag)::type;
    constexpr int N = Pack<T>::N;
    constexpr int U = kMode == VecMode::kTiles4 ? 4 : 2;
    const auto* x = static_cast<const T*>(in[0].data);
    auto* y = static_cast<T*>(out[0].data);
    int64_t head = cu::headTo16(x, sizeof(T));
    if (head < 0 || head != cu::headTo16(y, sizeof(T)) || head > n) head = -1;
    const int64_t nvec = head < 0 ? 0 : (n - head) / N;
    if (head < 0) head = 0;
    const int64_t work = nvec > 0 ? (nvec + U - 1) / U : n - nvec * N;
    cudaStream_t st = ops::streamOf(ctx);
    switch (kMode) {
      case VecMode::kFill:
        geluVecKernel<T, 2><<<cu::gridFill(geluVecKernel<T, 2>, work, kThreads), kThreads, 0, st>>>(
            x, y, n, head, nvec, s);
        return ops::lastLaunch("FusedGelu cuda.vec16");
      case VecMode::kTiles:
        geluVecKernel<T, 2>
            <<<cu::gridAll(work, kThreads), kThreads, 0, st>>>(x, y, n, head, nvec, s);
        return ops::lastLaunch("FusedGelu cuda.vec16_tiles");
      case VecMode::kTiles4:
        geluVecKernel<T, 4>
            <<<cu::gridAll(work, kThreads), kThreads, 0, st>>>(x, y, n, head, nvec, s);
        return ops::lastLaunch("FusedGelu cuda.vec16x4_tiles");
    }
    return Status::internal("FusedGelu: unknown vector mode");
  });
}

inline Status geluScalar(KernelContext& ctx, std::span<const Tensor> in,
                         std::span<const Tensor> out) {
  const int64_t n = in[0].numel();
  if (n == 0) return Status::ok();
  const GeluStages s = geluStages(ctx.attrs());
  return ops::visitDevice<ops::kFloats>(in[0].desc.dtype, "FusedGelu", [&](auto tag) -> Status {
    using T = typename decltype(tag)::type;
    geluScalarKernel<T>
        <<<cu::gridFill(geluScalarKernel<T>, n, kThreads), kThreads, 0, ops::streamOf(ctx)>>>(
            static_cast<const T*>(in[0].data), static_cast<T*>(out[0].data), n, s);
    return ops::lastLaunch("FusedGelu cuda.scalar");
  });
}

}  // namespace tactics_impl

// Adds tactics 1-4 to the op being defined.
inline void addGeluTactics(OpDef& d) {
  using namespace tactics_impl;
  d.tactic(1, "cuda.vec16", geluVec<VecMode::kFill>);
  d.tactic(2, "cuda.scalar", geluScalar);
  d.tactic(3, "cuda.vec16_tiles",
           geluVec<VecMode::kTiles>);  // one block per tile, no grid-stride round
  d.tactic(4, "cuda.vec16x4_tiles", geluVec<VecMode::kTiles4>);
}

}  // namespace opforge::gelu
