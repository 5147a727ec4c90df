// CUDA tactics of ai.onnx::MaxPool:
//   1 cuda.window  one thread per output element (common/pool_cuda.cuh), any rank, the Indices
//                  output when the node lists it;
//   2 cuda.rows2d  2-D windows without Indices: one block per output row, 32-bit index math, the
//                  window's valid rows and columns clipped once (NaN-propagating like the
//                  reference).
#include "../common/pool_cuda.cuh"

namespace opforge::ops {
namespace {

template <typename S>
__global__ void __launch_bounds__(kThreads)
    maxPool2dRowsKernel(PoolGeomDev g, const S* __restrict__ x, S* __restrict__ y) {
  using C = typename DNum<S>::C;
  const int oh = static_cast<int>(g.osz[0]), ow = static_cast<int>(g.osz[1]);
  const int ih = static_cast<int>(g.isz[0]), iw = static_cast<int>(g.isz[1]);
  const int kh = static_cast<int>(g.k[0]), kw = static_cast<int>(g.k[1]);
  const int sh = static_cast<int>(g.s[0]), sw = static_cast<int>(g.s[1]);
  const int dh = static_cast<int>(g.d[0]), dw = static_cast<int>(g.d[1]);
  const int64_t row = blockIdx.x, plane = row / oh;
  const int oy = static_cast<int>(row - plane * oh);
  const S* xp = x + plane * g.ip;
  S* yp = y + row * ow;
  const int y0 = oy * sh - static_cast<int>(g.pb[0]);
  C lowest;
  if constexpr (std::is_floating_point_v<C>)
    lowest = -std::numeric_limits<C>::infinity();
  else
    lowest = std::numeric_limits<C>::lowest();
  for (int ox = threadIdx.x; ox < ow; ox += blockDim.x) {
    const int x0 = ox * sw - static_cast<int>(g.pb[1]);
    C best = lowest;
    bool nan = false;
    for (int j = 0; j < kh; ++j) {
      const int q = y0 + j * dh;
      if (q < 0 || q >= ih) continue;
      const S* r = xp + static_cast<int64_t>(q) * iw;
      for (int t = 0; t < kw; ++t) {
        const int p = x0 + t * dw;
        if (p < 0 || p >= iw) continue;
        const C v = DNum<S>::load(r[p]);
        if (v != v)
          nan = true;
        else if (v > best)
          best = v;
      }
    }
    if constexpr (std::is_floating_point_v<C>)
      if (nan) best = std::numeric_limits<C>::quiet_NaN();
    yp[ox] = DNum<S>::store(best);
  }
}

bool rows2dApplies(const AttrMap& at, std::span<const TensorDesc> in,
                   std::span<const TensorDesc> out) {
  if (!allLinear(in, out) || in[0].rank() != 4) return false;
  if (out.size() > 1 && out[1].numel() > 0) return false;  // Indices: tactic 1
  auto g = poolGeomOf(at, in[0], out[0]);
  if (!g || g->nd != 2) return false;
  const int64_t lim = int64_t{1} << 30;
  for (int a = 0; a < 2; ++a)
    if (g->isz[a] >= lim || g->osz[a] >= lim || g->k[a] * g->d[a] >= lim || g->s[a] >= lim ||
        g->pb[a] >= lim || g->osz[a] * g->s[a] >= lim)
      return false;
  return g->planes * g->osz[0] < (int64_t{1} << 31);
}

}  // namespace

OPFORGE_TACTICS("ai.onnx::MaxPool", [](OpDef& d) {
  d.tactic(
      1, "cuda.window",
      [](KernelContext& k, std::span<const Tensor> in, std::span<const Tensor> out) -> Status {
        OPFORGE_ASSIGN_OR_RETURN(PoolGeomDev g, poolGeomOf(k.attrs(), in[0].desc, out[0].desc));
        if (g.planes * g.op == 0) return Status::ok();
        auto* idx =
            out.size() > 1 && out[1].numel() > 0 ? static_cast<int64_t*>(out[1].data) : nullptr;
        const bool col = k.attr<int64_t>("storage_order") == 1;
        return visitDevice<kFloats | kSigned | kUnsigned>(
            in[0].desc.dtype, "MaxPool", [&](auto tag) -> Status {
              using S = typename decltype(tag)::type;
              poolKernel<S, true><<<blocksFor(g.planes * g.op), kThreads, 0, streamOf(k)>>>(
                  g, static_cast<const S*>(in[0].data), static_cast<S*>(out[0].data), idx, col,
                  false);
              return launched("MaxPool");
            });
      },
      linearOnly);
  d.tactic(
      2, "cuda.rows2d",
      [](KernelContext& k, std::span<const Tensor> in, std::span<const Tensor> out) -> Status {
        OPFORGE_ASSIGN_OR_RETURN(PoolGeomDev g, poolGeomOf(k.attrs(), in[0].desc, out[0].desc));
        if (g.planes * g.op == 0) return Status::ok();
        const int threads =
            static_cast<int>(std::min<int64_t>(kThreads, (g.osz[1] + 31) / 32 * 32));
        return visitDevice<kFloats | kSigned | kUnsigned>(
            in[0].desc.dtype, "MaxPool", [&](auto tag) -> Status {
              using S = typename decltype(tag)::type;
              maxPool2dRowsKernel<S>
                  <<<static_cast<unsigned>(g.planes * g.osz[0]), threads, 0, streamOf(k)>>>(
                      g, static_cast<const S*>(in[0].data), static_cast<S*>(out[0].data));
              return launched("MaxPool");
            });
      },
      rows2dApplies);
});

}  // namespace opforge::ops
