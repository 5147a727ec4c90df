// CUDA tactics of ai.onnx::MaxPool:
//   1 cuda.window  one thread per output element (common/pool_cuda.cuh), any rank, the Indices
//                  output when the node lists it;
//   2 cuda.rows2d  2-D windows without Indices: one block per output row, 32-bit index math, the
//                  window's valid rows and columns clipped once (NaN-propagating like the
//                  reference);
//   3 cuda.nhwc    2-D windows without Indices on channels-last (HWC) tensors, FP32/FP16/BF16:
//                  one thread per output pixel and 16 bytes of channels (8 FP16/BF16 or 4 FP32
//                  values, one vector load per tap) where the channel count and the pointers
//                  allow, else one channel per thread; coalesced along the channels.
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

// The geometry of a 2-D window without Indices whose sizes, window and index products stay under
// 2^30 (the 32-bit index math of tactics 2 and 3), or nothing.
std::optional<PoolGeomDev> window2d(const AttrMap& at, std::span<const TensorDesc> in,
                                    std::span<const TensorDesc> out) {
  if (in[0].rank() != 4) return std::nullopt;
  if (out.size() > 1 && out[1].numel() > 0) return std::nullopt;  // Indices: tactic 1
  auto g = poolGeomOf(at, in[0], out[0]);
  if (!g || g->nd != 2) return std::nullopt;
  const int64_t lim = int64_t{1} << 30;
  for (int a = 0; a < 2; ++a)
    if (g->isz[a] >= lim || g->osz[a] >= lim || g->k[a] * g->d[a] >= lim || g->s[a] >= lim ||
        g->pb[a] >= lim || g->osz[a] * g->s[a] >= lim)
      return std::nullopt;
  return *g;
}

bool rows2dApplies(const AttrMap& at, std::span<const TensorDesc> in,
                   std::span<const TensorDesc> out) {
  if (!allLinear(in, out)) return false;
  auto g = window2d(at, in, out);
  return g && g->planes * g->osz[0] < (int64_t{1} << 31);
}

// y[b, oy, ox, ch] (channels-last) = max over the window of x[b, y, x, ch], V channels a thread.
template <typename S, int V>
__global__ void __launch_bounds__(kThreads)
    maxPoolNhwcKernel(PoolGeomDev g, int64_t batches, int channels, const S* __restrict__ x,
                      S* __restrict__ y) {
  using C = typename DNum<S>::C;
  using Pack = Vec<S, V>;
  const int oh = static_cast<int>(g.osz[0]), ow = static_cast<int>(g.osz[1]);
  const int ih = static_cast<int>(g.isz[0]), iw = static_cast<int>(g.isz[1]);
  const int groups = channels / V;
  const int64_t total = batches * oh * ow * groups, stride = int64_t(gridDim.x) * blockDim.x;
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < total; i += stride) {
    const int cg = static_cast<int>(i % groups);
    const int64_t pix = i / groups;
    const int ox = static_cast<int>(pix % ow);
    const int64_t t = pix / ow;
    const int oy = static_cast<int>(t % oh);
    const int64_t b = t / oh;
    C best[V];
    bool nan[V];
    for (int e = 0; e < V; ++e) {
      best[e] = -std::numeric_limits<C>::infinity();  // FP32/FP16/BF16: C is float
      nan[e] = false;
    }
    const int y0 = oy * static_cast<int>(g.s[0]) - static_cast<int>(g.pb[0]);
    const int x0 = ox * static_cast<int>(g.s[1]) - static_cast<int>(g.pb[1]);
    for (int j = 0; j < static_cast<int>(g.k[0]); ++j) {
      const int q = y0 + j * static_cast<int>(g.d[0]);
      if (q < 0 || q >= ih) continue;
      for (int u = 0; u < static_cast<int>(g.k[1]); ++u) {
        const int p = x0 + u * static_cast<int>(g.d[1]);
        if (p < 0 || p >= iw) continue;
        const Pack pk = *reinterpret_cast<const Pack*>(x + ((b * ih + q) * iw + p) * channels +
                                                       static_cast<int64_t>(cg) * V);
        for (int e = 0; e < V; ++e) {
          const C v = DNum<S>::load(pk.v[e]);
          if (v != v)
            nan[e] = true;
          else if (v > best[e])
            best[e] = v;
        }
      }
    }
    Pack out;
    for (int e = 0; e < V; ++e)
      out.v[e] = DNum<S>::store(nan[e] ? std::numeric_limits<C>::quiet_NaN() : best[e]);
    *reinterpret_cast<Pack*>(y + i * V) = out;
  }
}

bool nhwcApplies(const AttrMap& at, std::span<const TensorDesc> in,
                 std::span<const TensorDesc> out) {
  if (in[0].rank() != 4 || in[0].format != Format::kHWC || out[0].format != Format::kHWC)
    return false;
  const DataType t = in[0].dtype;
  if (t != DataType::kFloat32 && t != DataType::kFloat16 && t != DataType::kBFloat16) return false;
  return window2d(at, in, out) && in[0].dims[1] < (int64_t{1} << 30);
}

template <typename S>
Status launchNhwc(const PoolGeomDev& g, const Tensor& x, const Tensor& y, cudaStream_t st) {
  constexpr int kVec = 16 / sizeof(S);
  const int64_t n = x.desc.dims[0];
  const int c = static_cast<int>(x.desc.dims[1]);
  const bool vec = c % kVec == 0 && aligned16(x.data) && aligned16(y.data);
  const int64_t threads = n * g.op * (vec ? c / kVec : c);
  const auto* px = static_cast<const S*>(x.data);
  auto* py = static_cast<S*>(y.data);
  if (vec)
    maxPoolNhwcKernel<S, kVec><<<blocksFor(threads), kThreads, 0, st>>>(g, n, c, px, py);
  else
    maxPoolNhwcKernel<S, 1><<<blocksFor(threads), kThreads, 0, st>>>(g, n, c, px, py);
  return launched("MaxPool");
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
  d.tactic(
      3, "cuda.nhwc",
      [](KernelContext& k, std::span<const Tensor> in, std::span<const Tensor> out) -> Status {
        OPFORGE_ASSIGN_OR_RETURN(PoolGeomDev g, poolGeomOf(k.attrs(), in[0].desc, out[0].desc));
        if (g.planes * g.op == 0) return Status::ok();
        return visitDevice<kF32 | kF16 | kBF16>(in[0].desc.dtype, "MaxPool", [&](auto tag) {
          return launchNhwc<typename decltype(tag)::type>(g, in[0], out[0], streamOf(k));
        });
      },
      nhwcApplies);
});

}  // namespace opforge::ops
