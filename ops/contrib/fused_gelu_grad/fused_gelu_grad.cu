// CUDA tactic of opforge::FusedGeluGrad: reads x and dy once, writes dx once; the forward values
// and the derivative of every stage are recomputed in registers.
//   1 cuda.vec16 — 16-byte vectors when x, dy and dx share their 16-byte alignment, grid-stride,
//                  scalar head/tail (all-scalar otherwise).
#include "../fused_gelu/fused_gelu.cuh"

namespace opforge::contrib {

namespace {
using cu::Pack;

constexpr int kThreads = 256;

template <typename T>
__global__ void __launch_bounds__(kThreads)
    geluGradKernel(const T* x, const T* dy, T* dx, int64_t n, int64_t head, int64_t nvec,
                   const GeluStages s) {
  using E = ops::DNum<T>;
  using C = typename E::C;
  using P = Pack<T>;
  constexpr int N = P::N;
  const auto* xv = reinterpret_cast<const uint4*>(x + head);
  const auto* dyv = reinterpret_cast<const uint4*>(dy + head);
  auto* dxv = reinterpret_cast<uint4*>(dx + head);
  const int64_t tid = blockIdx.x * int64_t(blockDim.x) + threadIdx.x;
  const int64_t nthreads = int64_t(gridDim.x) * blockDim.x;
  for (int64_t i = tid; i < nvec; i += nthreads) {
    P px, pd;
    px.u = xv[i];
    pd.u = dyv[i];
    C v[N], g[N];
#pragma unroll
    for (int e = 0; e < N; ++e) v[e] = E::loadBits(px.b[e]);
    cu::applyStageGrads(v, g, s);
#pragma unroll
    for (int e = 0; e < N; ++e) px.b[e] = E::storeBits(E::loadBits(pd.b[e]) * g[e]);
    dxv[i] = px.u;
  }
  const auto* xb = reinterpret_cast<const typename E::Bits*>(x);
  const auto* db = reinterpret_cast<const typename E::Bits*>(dy);
  auto* ob = reinterpret_cast<typename E::Bits*>(dx);
  const int64_t rest = n - nvec * N;
  for (int64_t r = tid; r < rest; r += nthreads) {
    const int64_t i = r < head ? r : r + nvec * N;
    C v[1] = {E::loadBits(xb[i])}, g[1];
    cu::applyStageGrads(v, g, s);
    ob[i] = E::storeBits(E::loadBits(db[i]) * g[0]);
  }
}

Status geluGradVec(KernelContext& ctx, std::span<const Tensor> in, std::span<const Tensor> out) {
  const int64_t n = in[0].numel();
  if (n == 0) return Status::ok();
  const GeluStages s = geluStages(ctx.attrs());
  return ops::visitDevice<ops::kFloats>(in[0].desc.dtype, "FusedGeluGrad", [&](auto tag) -> Status {
    using T = typename decltype(tag)::type;
    constexpr int N = Pack<T>::N;
    const auto* x = static_cast<const T*>(in[0].data);
    const auto* dy = static_cast<const T*>(in[1].data);
    auto* dx = static_cast<T*>(out[0].data);
    int64_t head = cu::headTo16(x, sizeof(T));
    if (head < 0 || head != cu::headTo16(dy, sizeof(T)) || head != cu::headTo16(dx, sizeof(T)) ||
        head > n)
      head = -1;
    const int64_t nvec = head < 0 ? 0 : (n - head) / N;
    if (head < 0) head = 0;
    const int64_t work = nvec > 0 ? nvec : n;
    geluGradKernel<T>
        <<<cu::gridFill(geluGradKernel<T>, work, kThreads), kThreads, 0, ops::streamOf(ctx)>>>(
            x, dy, dx, n, head, nvec, s);
    return ops::lastLaunch("FusedGeluGrad cuda.vec16");
  });
}
}  // namespace

OPFORGE_TACTICS("opforge::FusedGeluGrad", [](OpDef& d) { d.tactic(1, "cuda.vec16", geluGradVec); });

}  // namespace opforge::contrib
