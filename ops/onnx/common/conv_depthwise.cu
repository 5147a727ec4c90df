// Depthwise 2-D convolution on channels-last tensors (one filter per channel: group = C = M), the
// Conv / FusedConv tactics cuda.depthwise (4 output columns a thread), cuda.depthwise8 (8) and
// cuda.depthwise_tile (below): cuDNN's engines take 10-40x the memory floor on the depthwise layers
// of ConvNeXt (7x7) and EfficientNet (3x3, 5x5, stride 2).
//
// A block owns a slab of `packs` 16-byte channel groups (V channels each) and a range of output
// positions; it first copies the slab's filters into shared memory transposed to [tap][channel],
// so that a thread reads the V filters of a tap as one vector. A thread computes its V channels of
// TW consecutive output columns of one output row, accumulating in float (double for FP64). With
// the kernel width KW and the stride SW known at compile time, each input vector of a kernel row is
// loaded once into registers and used by every (column, tap) pair that reads it; other geometries
// take the generic loop (KW = 0). Epilogue: y = act(conv + bias + z), as the other convolution
// tactics.
#include <algorithm>
#include <optional>

#include "../../common/vec.cuh"
#include "conv_cuda.h"
#include "cuda_common.cuh"
#include "dmath.cuh"
#include "gemm_act.cuh"

namespace opforge::ops {
namespace {

struct DwGeom : Conv2dGeom {
  int packs;  // channel groups of a block's slab (a divisor of C / V)
};

template <typename S>
using DwAcc = std::conditional_t<std::is_same_v<S, double>, double, float>;

// The shared memory the filters of a slab take (taps x packs x V accumulator values).
template <typename S, int V>
size_t dwSmem(const DwGeom& g) {
  return size_t(g.kh) * g.kw * g.packs * V * sizeof(DwAcc<S>);
}

template <typename S, int V, int TW, int KW, int SW>
__global__ void __launch_bounds__(kThreads)
    depthwiseHwcKernel(DwGeom g, const S* __restrict__ x, const S* __restrict__ w,
                       const S* __restrict__ bias, const S* __restrict__ z, S* __restrict__ y,
                       Act act) {
  using T = DwAcc<S>;
  using Pack = Vec<S, V>;
  extern __shared__ __align__(16) unsigned char dw_smem[];
  T* ws = reinterpret_cast<T*>(dw_smem);  // [tap][packs * V]
  // 32-bit index arithmetic throughout (convDepthwiseApplies: fewer than 2^31 elements a tensor).
  const int c = static_cast<int>(g.c), ih = static_cast<int>(g.ih), iw = static_cast<int>(g.iw);
  const int oh = static_cast<int>(g.oh), ow = static_cast<int>(g.ow);
  const int taps = g.kh * g.kw, slab = g.packs * V;
  const int cbase = static_cast<int>(blockIdx.y) * slab;
  // Read in w's order (w[c][ky][kx]: coalesced), written transposed.
  for (int i = threadIdx.x; i < taps * slab; i += blockDim.x) {
    const int cl = i / taps, tap = i - cl * taps;
    ws[tap * slab + cl] = static_cast<T>(DNum<S>::load(w[cbase * taps + i]));
  }
  __syncthreads();
  const int lane = threadIdx.x % g.packs, per_block = blockDim.x / g.packs;
  const int spot = threadIdx.x / g.packs;
  const int c0 = cbase + lane * V;
  const int owt = (ow + TW - 1) / TW, total = static_cast<int>(g.n) * oh * owt;
  const int sw = KW ? SW : g.sw;
  T bv[V];
  for (int e = 0; e < V; ++e) bv[e] = bias ? static_cast<T>(DNum<S>::load(bias[c0 + e])) : T(0);
  for (int i = static_cast<int>(blockIdx.x) * per_block + spot; i < total;
       i += static_cast<int>(gridDim.x) * per_block) {
    const int t = i / owt, ox0 = (i - t * owt) * TW;
    const int b = t / oh, oy = t - b * oh;
    T acc[TW][V];
#pragma unroll
    for (int j = 0; j < TW; ++j)
#pragma unroll
      for (int e = 0; e < V; ++e) acc[j][e] = bv[e];
    const int ix0 = ox0 * sw - g.pw;
    for (int ky = 0; ky < g.kh; ++ky) {
      const int iy = oy * g.sh - g.ph + ky * g.dh;
      if (iy < 0 || iy >= ih) continue;
      const int row = (b * ih + iy) * iw;  // the input row's first pixel
      const T* wrow = ws + ky * g.kw * slab + lane * V;
      if constexpr (KW > 0) {
        T wt[KW][V];
#pragma unroll
        for (int kx = 0; kx < KW; ++kx)
#pragma unroll
          for (int e = 0; e < V; ++e) wt[kx][e] = wrow[kx * slab + e];
            // Input column ix0 + p feeds output j through tap kx = p - j * SW (dilation 1).
#pragma unroll
        for (int p = 0; p < (TW - 1) * SW + KW; ++p) {
          const int ix = ix0 + p;
          if (ix < 0 || ix >= iw) continue;
          const Pack xv = *reinterpret_cast<const Pack*>(x + (row + ix) * c + c0);
          T xf[V];
#pragma unroll
          for (int e = 0; e < V; ++e) xf[e] = static_cast<T>(DNum<S>::load(xv.v[e]));
#pragma unroll
          for (int j = 0; j < TW; ++j) {
            const int kx = p - j * SW;
            if (kx < 0 || kx >= KW) continue;
#pragma unroll
            for (int e = 0; e < V; ++e) acc[j][e] += xf[e] * wt[kx][e];
          }
        }
      } else {
        for (int kx = 0; kx < g.kw; ++kx) {
          T wt[V];
          for (int e = 0; e < V; ++e) wt[e] = wrow[kx * slab + e];
          for (int j = 0; j < TW; ++j) {
            const int ix = ix0 + j * g.sw + kx * g.dw;
            if (ix < 0 || ix >= iw) continue;
            const Pack xv = *reinterpret_cast<const Pack*>(x + (row + ix) * c + c0);
            for (int e = 0; e < V; ++e) acc[j][e] += static_cast<T>(DNum<S>::load(xv.v[e])) * wt[e];
          }
        }
      }
    }
#pragma unroll
    for (int j = 0; j < TW; ++j) {
      if (ox0 + j >= ow) break;
      const int o = ((b * oh + oy) * ow + ox0 + j) * c + c0;
      Pack zv{};
      if (z) zv = *reinterpret_cast<const Pack*>(z + o);
      Pack out;
#pragma unroll
      for (int e = 0; e < V; ++e) {
        T v = acc[j][e];
        if (z) v += static_cast<T>(DNum<S>::load(zv.v[e]));
        out.v[e] = DNum<S>::store(static_cast<typename DNum<S>::C>(gemmAct<S>(v, act)));
      }
      *reinterpret_cast<Pack*>(y + o) = out;
    }
  }
}

constexpr size_t kDwSmemMax = 48 * 1024;  // the default dynamic shared memory limit

// The slab: the largest divisor of C / V up to 32 groups whose filters fit in shared memory;
// 0 when not even one group's do (a kernel of more than ~1500 taps).
template <typename S, int V>
int dwPacks(DwGeom g) {
  const int64_t groups = g.c / V;
  for (int p = static_cast<int>(std::min<int64_t>(groups, 32)); p >= 1; --p) {
    g.packs = p;
    if (groups % p == 0 && dwSmem<S, V>(g) <= kDwSmemMax) return p;
  }
  return 0;
}

template <typename S, int V, int TW>
Status launchDw(DwGeom g, const ConvArgs& a, cudaStream_t st) {
  g.packs = dwPacks<S, V>(g);
  if (g.packs == 0) return Status::unsupported("cuda.depthwise: the filters exceed shared memory");
  const int per_block = kThreads / g.packs, threads = per_block * g.packs;
  const int64_t total = g.n * g.oh * ((g.ow + TW - 1) / TW);
  const int64_t slabs = g.c / V / g.packs;
  if (slabs > 65535) return Status::unsupported("cuda.depthwise: more than 65535 channel slabs");
  const size_t smem = dwSmem<S, V>(g);
  const auto args = [&](auto kernel) {
    // Two waves of resident blocks at most: each block stages its slab's filters once and loops.
    const int64_t waves = 2 * int64_t(cuvec::smCount()) * cuvec::blocksPerSm(kernel, threads, smem);
    const int64_t blocks =
        std::clamp<int64_t>((waves + slabs - 1) / slabs, 1, (total + per_block - 1) / per_block);
    const dim3 grid(static_cast<unsigned>(std::min<int64_t>(blocks, int64_t{1} << 20)),
                    static_cast<unsigned>(slabs));
    kernel<<<grid, threads, smem, st>>>(g, static_cast<const S*>(a.x), static_cast<const S*>(a.w),
                                        static_cast<const S*>(a.bias), static_cast<const S*>(a.z),
                                        static_cast<S*>(a.y), a.act);
  };
  const bool fixed = g.dw == 1 && (g.sw == 1 || g.sw == 2);
  if (fixed && g.kw == 3)
    g.sw == 1 ? args(depthwiseHwcKernel<S, V, TW, 3, 1>) : args(depthwiseHwcKernel<S, V, TW, 3, 2>);
  else if (fixed && g.kw == 5)
    g.sw == 1 ? args(depthwiseHwcKernel<S, V, TW, 5, 1>) : args(depthwiseHwcKernel<S, V, TW, 5, 2>);
  else if (fixed && g.kw == 7)
    g.sw == 1 ? args(depthwiseHwcKernel<S, V, TW, 7, 1>) : args(depthwiseHwcKernel<S, V, TW, 7, 2>);
  else
    args(depthwiseHwcKernel<S, V, TW, 0, 1>);
  return launched("Conv (cuda.depthwise)");
}

DwGeom dwGeom(const ConvArgs& a) {
  return DwGeom{conv2dGeom(a), 0};
}

// cuda.depthwise_tile: square K x K filters (3, 5, 7), equal strides ST (1, 2), dilation 1, and
// 16-byte channel vectors. A block stages one output tile's input window (zero where it falls in
// the padding) and its channel slab's filters in shared memory, then computes from there: no bounds
// test and no global load in the inner loops, which held cuda.depthwise to a third of its issue
// slots (ncu: integer- and latency-bound on ConvNeXt's 7x7 layers). Thread (g, w): channel vector
// g of the slab's `cg`, worker w = (row r, segment s) of the tile's `rows` x `segs` * TW outputs.
struct DwTile {
  int cg, rows, segs;  // the block: cg * rows * segs threads
  int ihw, iww;        // the input window: ((rows - 1) * ST + K) x ((segs * TW - 1) * ST + K)
  int tiles_y, tiles_x;
};

constexpr int kDwTileThreads = 256;
constexpr int kDwTileColumns = 4;  // TW: output columns a thread

template <typename S, int V, int K>
size_t dwTileSmem(const DwTile& t) {
  return (size_t(K) * K + size_t(t.ihw) * t.iww) * t.cg * V * sizeof(S);
}

template <typename S, int V, int TW, int K, int ST>
__global__ void __launch_bounds__(kDwTileThreads)
    depthwiseTileKernel(DwGeom g, DwTile t, const S* __restrict__ x, const S* __restrict__ w,
                        const S* __restrict__ bias, const S* __restrict__ z, S* __restrict__ y,
                        Act act) {
  using T = DwAcc<S>;
  using Pack = Vec<S, V>;
  extern __shared__ __align__(16) unsigned char dw_smem[];
  Pack* ws = reinterpret_cast<Pack*>(dw_smem);  // [tap][cg]: the filters, stored as S
  Pack* xs = ws + K * K * t.cg;                 // [window row][window column][cg]
  const int c = static_cast<int>(g.c), ih = static_cast<int>(g.ih), iw = static_cast<int>(g.iw);
  const int oh = static_cast<int>(g.oh), ow = static_cast<int>(g.ow);
  const int slab = t.cg * V, cbase = static_cast<int>(blockIdx.y) * slab;
  const int per_image = t.tiles_y * t.tiles_x, tile = static_cast<int>(blockIdx.x);
  const int b = tile / per_image, tyx = tile - b * per_image;
  const int oy0 = (tyx / t.tiles_x) * t.rows, ox0 = (tyx % t.tiles_x) * t.segs * TW;
  const int iy0 = oy0 * ST - g.ph, ix0 = ox0 * ST - g.pw;
  const int nthreads = static_cast<int>(blockDim.x);
  // Filters: w[channel][tap], read in order, written [tap][channel] (a thread's V channels of a
  // tap are one vector).
  S* wsc = reinterpret_cast<S*>(ws);
  for (int i = threadIdx.x; i < K * K * slab; i += nthreads) {
    const int cl = i / (K * K), tap = i - cl * (K * K);
    wsc[tap * slab + cl] = w[(cbase + cl) * K * K + tap];
  }
  // The input window, 16 bytes a thread, consecutive threads along the channels.
  const int window = t.ihw * t.iww * t.cg;
  for (int i = threadIdx.x; i < window; i += nthreads) {
    const int pix = i / t.cg, gg = i - pix * t.cg;
    const int wy = pix / t.iww, wx = pix - wy * t.iww;
    const int iy = iy0 + wy, ix = ix0 + wx;
    Pack v{};
    if (iy >= 0 && iy < ih && ix >= 0 && ix < iw)
      v = *reinterpret_cast<const Pack*>(x + ((b * ih + iy) * iw + ix) * c + cbase + gg * V);
    xs[i] = v;
  }
  __syncthreads();
  const int gl = threadIdx.x % t.cg, wk = threadIdx.x / t.cg;
  const int r = wk / t.segs, sg = wk - r * t.segs;
  const int oy = oy0 + r, oxs = ox0 + sg * TW;
  if (r >= t.rows || oy >= oh || oxs >= ow) return;  // no barrier follows
  const int c0 = cbase + gl * V;
  T acc[TW][V];
#pragma unroll
  for (int e = 0; e < V; ++e) {
    const T bv = bias ? static_cast<T>(DNum<S>::load(bias[c0 + e])) : T(0);
#pragma unroll
    for (int j = 0; j < TW; ++j) acc[j][e] = bv;
  }
#pragma unroll
  for (int ky = 0; ky < K; ++ky) {
    const Pack* xrow = xs + ((r * ST + ky) * t.iww + sg * TW * ST) * t.cg + gl;
    T wt[K][V];
#pragma unroll
    for (int kx = 0; kx < K; ++kx) {
      const Pack wv = ws[(ky * K + kx) * t.cg + gl];
#pragma unroll
      for (int e = 0; e < V; ++e) wt[kx][e] = static_cast<T>(DNum<S>::load(wv.v[e]));
    }
    // Window column p feeds output j through tap kx = p - j * ST.
#pragma unroll
    for (int p = 0; p < (TW - 1) * ST + K; ++p) {
      const Pack xv = xrow[p * t.cg];
      T xf[V];
#pragma unroll
      for (int e = 0; e < V; ++e) xf[e] = static_cast<T>(DNum<S>::load(xv.v[e]));
#pragma unroll
      for (int j = 0; j < TW; ++j) {
        const int kx = p - j * ST;
        if (kx < 0 || kx >= K) continue;
#pragma unroll
        for (int e = 0; e < V; ++e) acc[j][e] += xf[e] * wt[kx][e];
      }
    }
  }
#pragma unroll
  for (int j = 0; j < TW; ++j) {
    if (oxs + j >= ow) break;
    const int o = ((b * oh + oy) * ow + oxs + j) * c + c0;
    Pack zv{};
    if (z) zv = *reinterpret_cast<const Pack*>(z + o);
    Pack out;
#pragma unroll
    for (int e = 0; e < V; ++e) {
      T v = acc[j][e];
      if (z) v += static_cast<T>(DNum<S>::load(zv.v[e]));
      out.v[e] = DNum<S>::store(static_cast<typename DNum<S>::C>(gemmAct<S>(v, act)));
    }
    *reinterpret_cast<Pack*>(y + o) = out;
  }
}

// The block's shape for this geometry. Tactic cuda.depthwise_tile: the largest channel slab up to 8
// vectors that divides C / V and 256 threads; cuda.depthwise_tile_s (`small`): up to 4 vectors and
// 128 threads, twice the blocks of half the size, for the small planes of late stages (ConvNeXt's
// 14x14 and 7x7: a 256-thread tile gives fewer blocks than the GPU holds at once). Then up to 4
// segments of TW columns across the output row, and as many tile rows as the threads and the
// default 48 KiB of shared memory allow, evened out over the plane's rows (14 rows: two tiles of 7,
// not 8 + 6). nullopt where the geometry is not one the kernel takes.
template <typename S, int V>
std::optional<DwTile> dwTile(const DwGeom& g, bool small) {
  const int k = g.kh, st = g.sh;
  if (g.kh != g.kw || (k != 3 && k != 5 && k != 7) || g.sh != g.sw || (st != 1 && st != 2) ||
      g.dh != 1 || g.dw != 1 || g.c % V != 0 || g.oh <= 0)
    return std::nullopt;
  const int64_t groups = g.c / V;
  const int max_cg = small ? 4 : 8, threads = small ? kDwTileThreads / 2 : kDwTileThreads;
  DwTile t{};
  for (int d = static_cast<int>(std::min<int64_t>(groups, max_cg)); d >= 1; --d)
    if (groups % d == 0) {
      t.cg = d;
      break;
    }
  if (groups / t.cg > 65535) return std::nullopt;
  constexpr int TW = kDwTileColumns;
  t.segs = static_cast<int>(std::clamp<int64_t>((g.ow + TW - 1) / TW, 1, 4));
  t.rows = static_cast<int>(std::clamp<int64_t>(threads / (t.cg * t.segs), 1, g.oh));
  t.iww = (t.segs * TW - 1) * st + k;
  for (;; --t.rows) {
    t.ihw = (t.rows - 1) * st + k;
    const size_t smem = (size_t(k) * k + size_t(t.ihw) * t.iww) * t.cg * V * sizeof(S);
    if (smem <= kDwSmemMax) break;
    if (t.rows == 1) return std::nullopt;
  }
  // The same number of tiles down the plane, each as short as that allows.
  const int64_t tiles = (g.oh + t.rows - 1) / t.rows;
  t.rows = static_cast<int>((g.oh + tiles - 1) / tiles);
  t.ihw = (t.rows - 1) * st + k;
  t.tiles_y = static_cast<int>(tiles);
  t.tiles_x = static_cast<int>((g.ow + t.segs * TW - 1) / (t.segs * TW));
  if (g.n * t.tiles_y * t.tiles_x > 0x7fffffff) return std::nullopt;
  return t;
}

template <typename S, int V>
Status launchDwTile(const DwGeom& g, const DwTile& t, const ConvArgs& a, cudaStream_t st) {
  constexpr int TW = kDwTileColumns;
  const dim3 grid(static_cast<unsigned>(g.n * t.tiles_y * t.tiles_x),
                  static_cast<unsigned>(g.c / V / t.cg));
  const int threads = t.cg * t.rows * t.segs;
  const auto go = [&](auto kernel, size_t smem) {
    kernel<<<grid, threads, smem, st>>>(g, t, static_cast<const S*>(a.x),
                                        static_cast<const S*>(a.w), static_cast<const S*>(a.bias),
                                        static_cast<const S*>(a.z), static_cast<S*>(a.y), a.act);
  };
  switch (g.kh * 10 + g.sh) {
    case 31:
      go(depthwiseTileKernel<S, V, TW, 3, 1>, dwTileSmem<S, V, 3>(t));
      break;
    case 32:
      go(depthwiseTileKernel<S, V, TW, 3, 2>, dwTileSmem<S, V, 3>(t));
      break;
    case 51:
      go(depthwiseTileKernel<S, V, TW, 5, 1>, dwTileSmem<S, V, 5>(t));
      break;
    case 52:
      go(depthwiseTileKernel<S, V, TW, 5, 2>, dwTileSmem<S, V, 5>(t));
      break;
    case 71:
      go(depthwiseTileKernel<S, V, TW, 7, 1>, dwTileSmem<S, V, 7>(t));
      break;
    case 72:
      go(depthwiseTileKernel<S, V, TW, 7, 2>, dwTileSmem<S, V, 7>(t));
      break;
    default:
      return Status::unsupported("cuda.depthwise_tile: a filter other than 3, 5, 7");
  }
  return launched("Conv (cuda.depthwise_tile)");
}

// The tile kernel's types: 16-byte vectors of FP32, FP16 or BF16 (the channels-last combinations).
template <typename F>
Status visitDwTile(DataType t, F&& f) {
  return visitDevice<kF32 | kF16 | kBF16>(t, "Conv", [&](auto tag) -> Status {
    using S = typename decltype(tag)::type;
    return f(tag, std::integral_constant<int, 16 / sizeof(S)>{});
  });
}

}  // namespace

bool convDepthwiseTileApplies(const ConvArgs& a, bool small) {
  if (!convDepthwiseApplies(a)) return false;
  const DwGeom g = dwGeom(a);
  bool ok = false;
  (void)visitDwTile(a.dtype, [&](auto tag, auto v) -> Status {
    using S = typename decltype(tag)::type;
    ok = dwTile<S, decltype(v)::value>(g, small).has_value();
    return Status::ok();
  });
  return ok;
}

Status convDepthwiseTile(const ConvArgs& a, bool small, void* stream) {
  if (!convDepthwiseTileApplies(a, small))
    return Status::unsupported(
        "cuda.depthwise_tile: not a channels-last depthwise convolution with a square 3, 5 or 7 "
        "filter, stride 1 or 2 and 16-byte channel vectors");
  // A view that is not 16-byte aligned (the plan's own buffers are) takes the per-channel loop.
  if (!aligned16(a.x) || !aligned16(a.y) || (a.z && !aligned16(a.z)))
    return convDepthwise(a, kDwTileColumns, stream);
  const DwGeom g = dwGeom(a);
  if (g.n * g.oh * g.ow * g.c == 0) return Status::ok();
  cudaStream_t st = static_cast<cudaStream_t>(stream);
  return visitDwTile(a.dtype, [&](auto tag, auto v) -> Status {
    using S = typename decltype(tag)::type;
    constexpr int V = decltype(v)::value;
    return launchDwTile<S, V>(g, *dwTile<S, V>(g, small), a, st);
  });
}

bool convDepthwiseApplies(const ConvArgs& a) {
  if (!(a.hwc && a.nd == 2 && a.group == a.c && a.m == a.c && a.c > 0)) return false;
  constexpr int64_t kIndexLimit = int64_t{1} << 31;  // the kernel's 32-bit index arithmetic
  if (a.n * a.c * a.isz[0] * a.isz[1] >= kIndexLimit ||
      a.n * a.c * a.osz[0] * a.osz[1] >= kIndexLimit)
    return false;
  // The filters of one channel group must fit in shared memory (the scalar width bounds it).
  const DwGeom g = dwGeom(a);
  switch (a.dtype) {
    case DataType::kFloat32:
    case DataType::kFloat16:
    case DataType::kBFloat16:
      return dwPacks<float, 1>(g) > 0;
    case DataType::kFloat64:
      return dwPacks<double, 1>(g) > 0;
    default:
      return false;
  }
}

Status convDepthwise(const ConvArgs& a, int columns, void* stream) {
  if (!convDepthwiseApplies(a))
    return Status::unsupported("cuda.depthwise: not a channels-last 2-D depthwise convolution");
  const DwGeom g = dwGeom(a);
  if (g.n * g.oh * g.ow * g.c == 0) return Status::ok();
  cudaStream_t st = static_cast<cudaStream_t>(stream);
  return visitDevice<kFloats>(a.dtype, "Conv", [&](auto tag) -> Status {
    using S = typename decltype(tag)::type;
    // 16 bytes of channels a thread where the channel count and the pointers allow, else one.
    constexpr int kVec = 16 / sizeof(S);
    const bool vec = a.c % kVec == 0 && aligned16(a.x) && aligned16(a.y) &&
                     (!a.z || aligned16(a.z)) && dwPacks<S, kVec>(g) > 0;
    if (columns == 8) return vec ? launchDw<S, kVec, 8>(g, a, st) : launchDw<S, 1, 8>(g, a, st);
    return vec ? launchDw<S, kVec, 4>(g, a, st) : launchDw<S, 1, 4>(g, a, st);
  });
}

}  // namespace opforge::ops
