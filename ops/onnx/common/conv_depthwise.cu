// Depthwise 2-D convolution on channels-last tensors (one filter per channel: group = C = M), the
// Conv / FusedConv tactic cuda.depthwise: cuDNN's engines take 10-40x the memory floor on the
// depthwise layers of ConvNeXt (7x7) and EfficientNet (3x3, 5x5, stride 2).
//
// A thread computes V consecutive channels (one 16-byte load of x per tap) of TW consecutive output
// columns of one output row, accumulating in float (double for FP64). With the kernel width KW and
// the stride SW known at compile time, each input vector of a kernel row is loaded once into
// registers and used by every (column, tap) pair that reads it; other geometries take the generic
// loop (KW = 0). Epilogue: y = act(conv + bias + z), as the other convolution tactics.
#include "conv_cuda.h"
#include "cuda_common.cuh"
#include "dmath.cuh"

namespace opforge::ops {
namespace {

struct DwGeom {
  int64_t n, c, ih, iw, oh, ow;
  int kh, kw, sh, sw, dh, dw, ph, pw;
};

template <typename S>
using DwAcc = std::conditional_t<std::is_same_v<S, double>, double, float>;

template <typename S, int V, int TW, int KW, int SW>
__global__ void __launch_bounds__(kThreads)
    depthwiseHwcKernel(DwGeom g, const S* __restrict__ x, const S* __restrict__ w,
                       const S* __restrict__ bias, const S* __restrict__ z, S* __restrict__ y,
                       Act act) {
  using T = DwAcc<S>;
  using Pack = Vec<S, V>;
  const int64_t cv = g.c / V, owt = (g.ow + TW - 1) / TW, total = g.n * g.oh * owt * cv;
  const int64_t taps = int64_t(g.kh) * g.kw;
  const int64_t stride = int64_t(gridDim.x) * blockDim.x;
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < total; i += stride) {
    const int64_t c0 = (i % cv) * V;
    int64_t t = i / cv;
    const int64_t ox0 = (t % owt) * TW;
    t /= owt;
    const int64_t oy = t % g.oh, b = t / g.oh;
    T acc[TW][V];
    for (int e = 0; e < V; ++e) {
      const T b0 = bias ? static_cast<T>(DNum<S>::load(bias[c0 + e])) : T(0);
      for (int j = 0; j < TW; ++j) acc[j][e] = b0;
    }
    const int64_t ix0 = ox0 * (KW ? SW : g.sw) - g.pw;
    for (int ky = 0; ky < g.kh; ++ky) {
      const int64_t iy = oy * g.sh - g.ph + int64_t(ky) * g.dh;
      if (iy < 0 || iy >= g.ih) continue;
      const S* row = x + ((b * g.ih + iy) * g.iw) * g.c + c0;
      const S* wrow = w + c0 * taps + int64_t(ky) * g.kw;  // w[c][ky][kx], one filter a channel
      if constexpr (KW > 0) {
        T wt[KW][V];
        for (int kx = 0; kx < KW; ++kx)
          for (int e = 0; e < V; ++e)
            wt[kx][e] = static_cast<T>(DNum<S>::load(wrow[e * taps + kx]));
            // Input column ix0 + p feeds output j through tap kx = p - j * SW (dilation 1).
#pragma unroll
        for (int p = 0; p < (TW - 1) * SW + KW; ++p) {
          const int64_t ix = ix0 + p;
          if (ix < 0 || ix >= g.iw) continue;
          const Pack xv = *reinterpret_cast<const Pack*>(row + ix * g.c);
#pragma unroll
          for (int j = 0; j < TW; ++j) {
            const int kx = p - j * SW;
            if (kx < 0 || kx >= KW) continue;
            for (int e = 0; e < V; ++e)
              acc[j][e] += static_cast<T>(DNum<S>::load(xv.v[e])) * wt[kx][e];
          }
        }
      } else {
        for (int kx = 0; kx < g.kw; ++kx) {
          T wt[V];
          for (int e = 0; e < V; ++e) wt[e] = static_cast<T>(DNum<S>::load(wrow[e * taps + kx]));
          for (int j = 0; j < TW; ++j) {
            const int64_t ix = ix0 + int64_t(j) * g.sw + int64_t(kx) * g.dw;
            if (ix < 0 || ix >= g.iw) continue;
            const Pack xv = *reinterpret_cast<const Pack*>(row + ix * g.c);
            for (int e = 0; e < V; ++e) acc[j][e] += static_cast<T>(DNum<S>::load(xv.v[e])) * wt[e];
          }
        }
      }
    }
    for (int j = 0; j < TW; ++j) {
      if (ox0 + j >= g.ow) break;
      const int64_t o = ((b * g.oh + oy) * g.ow + ox0 + j) * g.c + c0;
      Pack zv{};
      if (z) zv = *reinterpret_cast<const Pack*>(z + o);
      Pack out;
      for (int e = 0; e < V; ++e) {
        T v = acc[j][e];
        if (z) v += static_cast<T>(DNum<S>::load(zv.v[e]));
        out.v[e] = DNum<S>::store(static_cast<typename DNum<S>::C>(applyAct(v, act)));
      }
      *reinterpret_cast<Pack*>(y + o) = out;
    }
  }
}

template <typename S, int V>
Status launchDw(const DwGeom& g, const ConvArgs& a, cudaStream_t st) {
  constexpr int kTw = 4;
  const int64_t total = g.n * g.oh * ((g.ow + kTw - 1) / kTw) * (g.c / V);
  const auto args = [&](auto kernel) {
    kernel<<<blocksFor(total), kThreads, 0, st>>>(
        g, static_cast<const S*>(a.x), static_cast<const S*>(a.w), static_cast<const S*>(a.bias),
        static_cast<const S*>(a.z), static_cast<S*>(a.y), a.act);
  };
  const bool fixed = g.dw == 1 && (g.sw == 1 || g.sw == 2);
  if (fixed && g.kw == 3)
    g.sw == 1 ? args(depthwiseHwcKernel<S, V, kTw, 3, 1>)
              : args(depthwiseHwcKernel<S, V, kTw, 3, 2>);
  else if (fixed && g.kw == 5)
    g.sw == 1 ? args(depthwiseHwcKernel<S, V, kTw, 5, 1>)
              : args(depthwiseHwcKernel<S, V, kTw, 5, 2>);
  else if (fixed && g.kw == 7)
    g.sw == 1 ? args(depthwiseHwcKernel<S, V, kTw, 7, 1>)
              : args(depthwiseHwcKernel<S, V, kTw, 7, 2>);
  else
    args(depthwiseHwcKernel<S, V, kTw, 0, 1>);
  return launched("Conv (cuda.depthwise)");
}

}  // namespace

bool convDepthwiseApplies(const ConvArgs& a) {
  return a.hwc && a.nd == 2 && a.group == a.c && a.m == a.c && a.c > 0 &&
         (a.dtype == DataType::kFloat32 || a.dtype == DataType::kFloat16 ||
          a.dtype == DataType::kBFloat16 || a.dtype == DataType::kFloat64);
}

Status convDepthwise(const ConvArgs& a, void* stream) {
  if (!convDepthwiseApplies(a))
    return Status::unsupported("cuda.depthwise: not a channels-last 2-D depthwise convolution");
  DwGeom g{a.n,
           a.c,
           a.isz[0],
           a.isz[1],
           a.osz[0],
           a.osz[1],
           static_cast<int>(a.k[0]),
           static_cast<int>(a.k[1]),
           static_cast<int>(a.s[0]),
           static_cast<int>(a.s[1]),
           static_cast<int>(a.d[0]),
           static_cast<int>(a.d[1]),
           static_cast<int>(a.pb[0]),
           static_cast<int>(a.pb[1])};
  if (g.n * g.oh * g.ow * g.c == 0) return Status::ok();
  cudaStream_t st = static_cast<cudaStream_t>(stream);
  return visitDevice<kFloats>(a.dtype, "Conv", [&](auto tag) -> Status {
    using S = typename decltype(tag)::type;
    // 16 bytes of channels a thread where the channel count and the pointers allow, else one.
    constexpr int kVec = 16 / sizeof(S);
    if (a.c % kVec == 0 && aligned16(a.x) && aligned16(a.y) && (!a.z || aligned16(a.z)))
      return launchDw<S, kVec>(g, a, st);
    return launchDw<S, 1>(g, a, st);
  });
}

}  // namespace opforge::ops
