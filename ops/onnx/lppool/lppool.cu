// CUDA tactic of ai.onnx::LpPool, cuda.window: one thread per output element walks its window
// (the geometry of common/pool_cuda.cuh) and sums |x|^p in double, as the reference.
#include "../common/pool_cuda.cuh"

namespace opforge::ops {
namespace {

template <typename S>
__global__ void __launch_bounds__(kThreads)
    lpPoolKernel(PoolGeomDev g, const S* __restrict__ x, S* __restrict__ y, double p) {
  const int64_t total = g.planes * g.op, stride = int64_t(gridDim.x) * blockDim.x;
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < total; i += stride) {
    const int64_t pl = i / g.op, o = i - pl * g.op;
    int64_t start[kMaxDims], lo[kMaxDims], cnt[kMaxDims];
    int64_t taps = 1;
    int64_t rem = o;
    for (int a = g.nd - 1; a >= 0; --a) {
      const int64_t oc = rem % g.osz[a];
      rem /= g.osz[a];
      int64_t hi, pad;
      poolRanges(g, a, oc, &start[a], &lo[a], &hi, &pad);
      cnt[a] = hi > lo[a] ? hi - lo[a] : 0;
      taps *= cnt[a];
    }
    const S* xp = x + pl * g.ip;
    double sum = 0;
    for (int64_t t = 0; t < taps; ++t) {
      int64_t r = t, flat = 0;
      int64_t q[kMaxDims];
      for (int a = g.nd - 1; a >= 0; --a) {
        q[a] = start[a] + (lo[a] + r % cnt[a]) * g.d[a];
        r /= cnt[a];
      }
      for (int a = 0; a < g.nd; ++a) flat = flat * g.isz[a] + q[a];
      sum += pow(fabs(static_cast<double>(DNum<S>::load(xp[flat]))), p);
    }
    y[i] = DNum<S>::store(static_cast<typename DNum<S>::C>(pow(sum, 1.0 / p)));
  }
}

Status lpPoolCuda(KernelContext& k, std::span<const Tensor> in, std::span<const Tensor> out) {
  OPFORGE_ASSIGN_OR_RETURN(PoolGeomDev g, poolGeomOf(k.attrs(), in[0].desc, out[0].desc));
  if (g.planes * g.op == 0) return Status::ok();
  const double p = static_cast<double>(k.attr<int64_t>("p"));
  return visitDevice<kFloats>(in[0].desc.dtype, "LpPool", [&](auto tag) -> Status {
    using S = typename decltype(tag)::type;
    lpPoolKernel<S><<<blocksFor(g.planes * g.op), kThreads, 0, streamOf(k)>>>(
        g, static_cast<const S*>(in[0].data), static_cast<S*>(out[0].data), p);
    return launched("LpPool");
  });
}
}  // namespace

OPFORGE_TACTICS("ai.onnx::LpPool",
                [](OpDef& d) { d.tactic(1, "cuda.window", lpPoolCuda, linearOnly); });

}  // namespace opforge::ops
