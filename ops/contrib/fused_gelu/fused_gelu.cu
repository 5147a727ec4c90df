// CUDA tactics of opforge::FusedGelu: one read and one write per element, the whole stage list in
// registers.
//   1 cuda.vec16  — 16-byte loads/stores, two vectors in flight per thread, grid-stride; a scalar
//                   head/tail when the tensor does not start on a 16-byte boundary or does not end
//                   on a vector; all-scalar when x and y are misaligned differently.
//   2 cuda.scalar — one element per thread, grid-stride (the baseline the autotuner compares).
#include "fused_gelu.cuh"

namespace opforge::contrib {

namespace {
using cu::Elem;
using cu::Pack;

constexpr int kThreads = 256;
constexpr int kUnroll = 2;

// Elements [head, head + nvec * N) as vectors; [0, head) and [head + nvec * N, n) one by one.
template <typename T>
__global__ void __launch_bounds__(kThreads) geluVecKernel(const T* x, T* y, int64_t n, int64_t head, int64_t nvec,
                                                          const GeluStages s) {
  using E = Elem<T>;
  using C = typename E::C;
  using P = Pack<T>;
  constexpr int N = P::N;
  const auto* xv = reinterpret_cast<const uint4*>(x + head);
  auto* yv = reinterpret_cast<uint4*>(y + head);
  const int64_t tid = blockIdx.x * int64_t(blockDim.x) + threadIdx.x;
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
      for (int e = 0; e < N; ++e) v[u * N + e] = E::load(p[u].b[e]);
    cu::applyStages(v, s);
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      const int64_t i = base + int64_t(u) * blockDim.x;
      if (i < nvec) {
#pragma unroll
        for (int e = 0; e < N; ++e) p[u].b[e] = E::store(v[u * N + e]);
        yv[i] = p[u].u;
      }
    }
  }
  const int64_t rest = n - nvec * N;  // head + tail elements
  const auto* xb = reinterpret_cast<const typename E::Bits*>(x);
  auto* yb = reinterpret_cast<typename E::Bits*>(y);
  for (int64_t r = tid; r < rest; r += nthreads) {
    const int64_t i = r < head ? r : r + nvec * N;
    C v[1] = {E::load(xb[i])};
    cu::applyStages(v, s);
    yb[i] = E::store(v[0]);
  }
}

template <typename T>
__global__ void __launch_bounds__(kThreads) geluScalarKernel(const T* x, T* y, int64_t n, const GeluStages s) {
  using E = Elem<T>;
  const auto* xb = reinterpret_cast<const typename E::Bits*>(x);
  auto* yb = reinterpret_cast<typename E::Bits*>(y);
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x) {
    typename E::C v[1] = {E::load(xb[i])};
    cu::applyStages(v, s);
    yb[i] = E::store(v[0]);
  }
}

template <typename F>
Status byType(DataType t, F&& f) {
  switch (t) {
    case DataType::kFloat32: return f(float{});
    case DataType::kFloat16: return f(__half{});
    case DataType::kBFloat16: return f(__nv_bfloat16{});
    case DataType::kFloat64: return f(double{});
    default: return Status::unsupported("FusedGelu CUDA tactics do not support " + dtypeName(t));
  }
}

template <bool kAllTiles>
Status geluVec(KernelContext& ctx, std::span<const Tensor> in, std::span<const Tensor> out) {
  const int64_t n = in[0].numel();
  if (n == 0) return Status::ok();
  const GeluStages s = geluStages(ctx.attrs());
  return byType(in[0].desc.dtype, [&](auto tag) -> Status {
    using T = decltype(tag);
    constexpr int N = Pack<T>::N;
    const auto* x = static_cast<const T*>(in[0].data);
    auto* y = static_cast<T*>(out[0].data);
    int64_t head = cu::headTo16(x, sizeof(T));
    if (head < 0 || head != cu::headTo16(y, sizeof(T)) || head > n) head = -1;
    const int64_t nvec = head < 0 ? 0 : (n - head) / N;
    if (head < 0) head = 0;
    const int64_t work = nvec > 0 ? (nvec + kUnroll - 1) / kUnroll : n - nvec * N;
    const unsigned grid = kAllTiles ? cu::gridAll(work, kThreads) : cu::gridFill(geluVecKernel<T>, work, kThreads);
    geluVecKernel<T><<<grid, kThreads, 0, ops::streamOf(ctx)>>>(x, y, n, head, nvec, s);
    return ops::lastLaunch(kAllTiles ? "FusedGelu cuda.vec16_tiles" : "FusedGelu cuda.vec16");
  });
}

Status geluScalar(KernelContext& ctx, std::span<const Tensor> in, std::span<const Tensor> out) {
  const int64_t n = in[0].numel();
  if (n == 0) return Status::ok();
  const GeluStages s = geluStages(ctx.attrs());
  return byType(in[0].desc.dtype, [&](auto tag) -> Status {
    using T = decltype(tag);
    geluScalarKernel<T><<<cu::gridFill(geluScalarKernel<T>, n, kThreads), kThreads, 0, ops::streamOf(ctx)>>>(
        static_cast<const T*>(in[0].data), static_cast<T*>(out[0].data), n, s);
    return ops::lastLaunch("FusedGelu cuda.scalar");
  });
}
}  // namespace

OPFORGE_TACTICS("opforge::FusedGelu", [](OpDef& d) {
  d.tactic(1, "cuda.vec16", geluVec<false>);
  d.tactic(2, "cuda.scalar", geluScalar);
  d.tactic(3, "cuda.vec16_tiles", geluVec<true>);  // one block per tile, no grid-stride round
});

}  // namespace opforge::contrib
