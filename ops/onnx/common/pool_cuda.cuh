// pool_cuda.cuh — MaxPool / AveragePool on the device: one thread per output element walks its
// window (the reference's geometry: common/pool.h, common/pooling.h). MaxPool: NaN-propagating
// maximum, the optional Indices output as the reference (first NaN, else first maximum; flat index
// over (N, C, D...), spatial axes column-major with storage_order = 1). AveragePool: sum in double,
// divided by the taps inside the input, or inside the explicitly padded input (count_include_pad).
#pragma once

#include "cuda_common.cuh"
#include "pooling.h"

namespace opforge::ops {

struct PoolGeomDev {
  int nd;
  int64_t planes, ip, op;
  int64_t isz[kMaxDims], osz[kMaxDims], k[kMaxDims], s[kMaxDims], d[kMaxDims], pb[kMaxDims],
      pe[kMaxDims];
};

inline Result<PoolGeomDev> poolGeomOf(const AttrMap& at, const TensorDesc& x, const TensorDesc& y) {
  OPFORGE_ASSIGN_OR_RETURN(Window w, poolWindow(at, x.rank()));
  if (w.nd > kMaxDims)
    return Status::unsupported("pooling (CUDA): more than " + std::to_string(kMaxDims) + " axes");
  const std::vector<int64_t> isz(x.dims.begin() + 2, x.dims.end());
  resolvePads(w, isz);
  PoolGeomDev g{};
  g.nd = w.nd;
  g.planes = x.dims[0] * x.dims[1];
  g.ip = g.op = 1;
  for (int i = 0; i < w.nd; ++i) {
    g.isz[i] = isz[i];
    g.osz[i] = y.dims[2 + i];
    g.k[i] = w.k[i], g.s[i] = w.s[i], g.d[i] = w.d[i], g.pb[i] = w.pb[i], g.pe[i] = w.pe[i];
    g.ip *= g.isz[i];
    g.op *= g.osz[i];
  }
  return g;
}

__device__ __forceinline__ int64_t poolCdiv(int64_t a, int64_t b) {
  return a <= 0 ? 0 : (a + b - 1) / b;
}
__device__ __forceinline__ int64_t poolMin(int64_t a, int64_t b) {
  return a < b ? a : b;
}

// Per axis of output coordinate oc: window start, valid tap range [lo, hi), padded tap count.
__device__ __forceinline__ void poolRanges(const PoolGeomDev& g, int a, int64_t oc, int64_t* start,
                                           int64_t* lo, int64_t* hi, int64_t* pad) {
  const int64_t s0 = oc * g.s[a] - g.pb[a];
  *start = s0;
  *lo = poolMin(g.k[a], poolCdiv(-s0, g.d[a]));
  *hi = poolMin(g.k[a], poolCdiv(g.isz[a] - s0, g.d[a]));
  *pad = poolMin(g.k[a], poolCdiv(g.isz[a] + g.pe[a] - s0, g.d[a]));
}

template <typename S, bool kMax>
__global__ void __launch_bounds__(kThreads)
    poolKernel(PoolGeomDev g, const S* __restrict__ x, S* __restrict__ y, int64_t* __restrict__ idx,
               bool col_major, bool include_pad) {
  using C = typename DNum<S>::C;
  const int64_t total = g.planes * g.op, stride = int64_t(gridDim.x) * blockDim.x;
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < total; i += stride) {
    const int64_t p = i / g.op, o = i - p * g.op;
    int64_t start[kMaxDims], lo[kMaxDims], hi[kMaxDims], cnt[kMaxDims];
    int64_t taps = 1, padded = 1;
    {
      int64_t rem = o;
      for (int a = g.nd - 1; a >= 0; --a) {
        const int64_t oc = rem % g.osz[a];
        rem /= g.osz[a];
        int64_t pad;
        poolRanges(g, a, oc, &start[a], &lo[a], &hi[a], &pad);
        cnt[a] = hi[a] > lo[a] ? hi[a] - lo[a] : 0;
        taps *= cnt[a];
        padded *= pad;
      }
    }
    const S* xp = x + p * g.ip;
    if constexpr (kMax) {
      C best{};
      int64_t arg = -1, nan_arg = -1;
      for (int64_t t = 0; t < taps; ++t) {
        int64_t rem = t, flat = 0;
        int64_t q[kMaxDims];
        for (int a = g.nd - 1; a >= 0; --a) {
          const int64_t j = lo[a] + rem % cnt[a];
          rem /= cnt[a];
          q[a] = start[a] + j * g.d[a];
        }
        for (int a = 0; a < g.nd; ++a) flat = flat * g.isz[a] + q[a];
        const C v = DNum<S>::load(xp[flat]);
        if (v != v) {
          if (nan_arg < 0) nan_arg = flat;
        } else if (arg < 0 || v > best) {
          best = v;
          arg = flat;
        }
      }
      if (arg < 0 && nan_arg < 0) {
        if constexpr (std::is_floating_point_v<C>)
          best = -std::numeric_limits<C>::infinity();
        else
          best = std::numeric_limits<C>::lowest();
      }
      if (nan_arg >= 0) {
        best = std::numeric_limits<C>::quiet_NaN();
        arg = nan_arg;
      }
      y[i] = DNum<S>::store(best);
      if (idx) {
        int64_t v = arg;
        if (col_major && arg >= 0) {  // reverse the order of the spatial axes
          int64_t rem = arg, mul = 1;
          int64_t coord[kMaxDims];
          for (int a = g.nd - 1; a >= 0; --a) coord[a] = rem % g.isz[a], rem /= g.isz[a];
          v = 0;
          for (int a = 0; a < g.nd; ++a) v += coord[a] * mul, mul *= g.isz[a];
        }
        idx[i] = p * g.ip + v;
      }
    } else {
      double sum = 0;
      for (int64_t t = 0; t < taps; ++t) {
        int64_t rem = t, flat = 0;
        int64_t q[kMaxDims];
        for (int a = g.nd - 1; a >= 0; --a) {
          const int64_t j = lo[a] + rem % cnt[a];
          rem /= cnt[a];
          q[a] = start[a] + j * g.d[a];
        }
        for (int a = 0; a < g.nd; ++a) flat = flat * g.isz[a] + q[a];
        sum += static_cast<double>(DNum<S>::load(xp[flat]));
      }
      const int64_t count = include_pad ? padded : taps;
      y[i] = DNum<S>::store(static_cast<C>(count ? sum / static_cast<double>(count) : 0.0));
    }
  }
}

}  // namespace opforge::ops
