// softmax_cuda.cuh — Softmax, LogSoftmax and Hardmax on the device over the reference's (outer, n,
// inner) geometry (common/softmax.h: opset 13 axis, or the older 2-D flattening). Arithmetic in
// float (double for FP64). Tactics: a warp or a block per row when the axis is innermost, a thread
// per column otherwise (coalesced over the inner axis). NaN behaves as in the reference: one NaN
// makes its row NaN (softmax, log-softmax); Hardmax takes the first maximum, or 0 when x[0] is NaN.
#pragma once

#include "cuda_common.cuh"
#include "dmath.cuh"
#include "softmax.h"

namespace opforge::ops {

template <typename S>
using SoftT = std::conditional_t<std::is_same_v<S, double>, double, float>;

template <typename T>
__device__ __forceinline__ T softMaxOf(T a, T b) {
  return b > a ? b : a;  // NaN never wins (as `row[j] > m` in the reference)
}

template <typename T>
__device__ __forceinline__ T warpMax(T v) {
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) v = softMaxOf(v, __shfl_xor_sync(0xffffffffu, v, o));
  return v;
}
template <typename T>
__device__ __forceinline__ T warpSum(T v) {
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
  return v;
}

// Hardmax: (value, index) with NaN as -inf; the best is the largest value, ties to the lower index.
template <typename T>
__device__ __forceinline__ void hardBetter(T& bv, int64_t& bj, T v, int64_t j) {
  const T vv = v != v ? -std::numeric_limits<T>::infinity() : v;  // NaN counts as -inf
  if (bj < 0 || vv > bv || (vv == bv && j < bj)) bv = vv, bj = j;
}

// One row (stride `inner`) by `lanes` cooperating threads: lane-local partials combined by `all`.
template <SoftmaxKind K, typename S, typename Reduce>
__device__ __forceinline__ void softmaxLine(const S* __restrict__ x, S* __restrict__ y, int64_t n,
                                            int64_t inner, int lane, int lanes, Reduce all) {
  using T = SoftT<S>;
  if constexpr (K == SoftmaxKind::kHardmax) {
    T bv = 0;
    int64_t bj = -1;
    for (int64_t j = lane; j < n; j += lanes)
      hardBetter(bv, bj, static_cast<T>(DNum<S>::load(x[j * inner])), j);
    bj = all.argmax(bv, bj);
    const T x0 = static_cast<T>(DNum<S>::load(x[0]));
    const int64_t arg = (x0 != x0 || bj < 0 || bv == -std::numeric_limits<T>::infinity()) ? 0 : bj;
    for (int64_t j = lane; j < n; j += lanes)
      y[j * inner] = DNum<S>::store(static_cast<typename DNum<S>::C>(j == arg ? 1 : 0));
  } else {
    T m = -std::numeric_limits<T>::infinity();
    for (int64_t j = lane; j < n; j += lanes)
      m = softMaxOf(m, static_cast<T>(DNum<S>::load(x[j * inner])));
    m = all.max(m);
    T s = 0;
    for (int64_t j = lane; j < n; j += lanes)
      s += dm::exp(static_cast<T>(DNum<S>::load(x[j * inner])) - m);
    s = all.sum(s);
    const T ls = dm::log(s);
    for (int64_t j = lane; j < n; j += lanes) {
      const T v = static_cast<T>(DNum<S>::load(x[j * inner]));
      const T r = K == SoftmaxKind::kSoftmax ? dm::exp(v - m) / s : v - m - ls;
      y[j * inner] = DNum<S>::store(static_cast<typename DNum<S>::C>(r));
    }
  }
}

struct ThreadAll {
  template <typename T>
  __device__ T max(T v) const {
    return v;
  }
  template <typename T>
  __device__ T sum(T v) const {
    return v;
  }
  template <typename T>
  __device__ int64_t argmax(T&, int64_t j) const {
    return j;
  }
};

struct WarpAll {
  template <typename T>
  __device__ T max(T v) const {
    return warpMax(v);
  }
  template <typename T>
  __device__ T sum(T v) const {
    return warpSum(v);
  }
  // The best (value, index) of the warp; v becomes the best value in every lane.
  template <typename T>
  __device__ int64_t argmax(T& v, int64_t j) const {
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) {
      const T ov = __shfl_xor_sync(0xffffffffu, v, o);
      const int64_t oj = __shfl_xor_sync(0xffffffffu, j, o);
      if (oj >= 0 && (j < 0 || ov > v || (ov == v && oj < j))) v = ov, j = oj;
    }
    return j;
  }
};

template <typename T>
struct BlockAll {
  T* red;        // [32]
  int64_t* idx;  // [32]
  __device__ T max(T v) const {
    v = warpMax(v);
    return share(v, true);
  }
  __device__ T sum(T v) const {
    v = warpSum(v);
    return share(v, false);
  }
  __device__ T share(T v, bool is_max) const {
    const int lane = threadIdx.x & 31, w = threadIdx.x >> 5, nw = blockDim.x >> 5;
    __syncthreads();
    if (lane == 0) red[w] = v;
    __syncthreads();
    T r = red[0];
    for (int i = 1; i < nw; ++i) r = is_max ? softMaxOf(r, red[i]) : r + red[i];
    return r;
  }
  // The best (value, index) of the block; v becomes the best value in every thread.
  __device__ int64_t argmax(T& v, int64_t j) const {
    j = WarpAll{}.argmax(v, j);  // every lane of a warp now holds the warp's best
    const int lane = threadIdx.x & 31, w = threadIdx.x >> 5, nw = blockDim.x >> 5;
    __syncthreads();
    if (lane == 0) red[w] = v, idx[w] = j;
    __syncthreads();
    T bv = red[0];
    int64_t bj = idx[0];
    for (int i = 1; i < nw; ++i)
      if (idx[i] >= 0 && (bj < 0 || red[i] > bv || (red[i] == bv && idx[i] < bj)))
        bv = red[i], bj = idx[i];
    v = bv;
    return bj;
  }
};

enum class SoftMode { kWarp, kBlock, kColumn };

template <SoftmaxKind K, typename S, SoftMode M>
__global__ void __launch_bounds__(kThreads)
    softmaxKernel(const S* x, S* y, int64_t outer, int64_t n, int64_t inner) {
  using T = SoftT<S>;
  if constexpr (M == SoftMode::kWarp) {
    const int64_t warps = int64_t(gridDim.x) * (blockDim.x >> 5);
    for (int64_t r = int64_t(blockIdx.x) * (blockDim.x >> 5) + (threadIdx.x >> 5); r < outer;
         r += warps)
      softmaxLine<K, S>(x + r * n, y + r * n, n, 1, threadIdx.x & 31, 32, WarpAll{});
  } else if constexpr (M == SoftMode::kBlock) {
    __shared__ T red[32];
    __shared__ int64_t idx[32];
    for (int64_t r = blockIdx.x; r < outer; r += gridDim.x)
      softmaxLine<K, S>(x + r * n, y + r * n, n, 1, threadIdx.x, blockDim.x, BlockAll<T>{red, idx});
  } else {
    const int64_t lines = outer * inner, stride = int64_t(gridDim.x) * blockDim.x;
    for (int64_t l = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; l < lines; l += stride) {
      const int64_t o = l / inner, i = l - o * inner;
      softmaxLine<K, S>(x + o * n * inner + i, y + o * n * inner + i, n, inner, 0, 1, ThreadAll{});
    }
  }
}

template <SoftmaxKind K, SoftMode M>
KernelFn softmaxFn(const char* name) {
  return [name](KernelContext& k, std::span<const Tensor> in,
                std::span<const Tensor> out) -> Status {
    int64_t outer, n, inner;
    softmaxGeometry(k.attrs(), in[0].desc.dims, &outer, &n, &inner);
    if (outer * n * inner == 0) return Status::ok();
    return visitDevice<kFloats>(in[0].desc.dtype, name, [&](auto tag) -> Status {
      using S = typename decltype(tag)::type;
      const auto* px = static_cast<const S*>(in[0].data);
      auto* py = static_cast<S*>(out[0].data);
      cudaStream_t st = streamOf(k);
      if constexpr (M == SoftMode::kWarp)
        softmaxKernel<K, S, M><<<blocksFor(outer * 32), kThreads, 0, st>>>(px, py, outer, n, inner);
      else if constexpr (M == SoftMode::kBlock)
        softmaxKernel<K, S, M>
            <<<static_cast<unsigned>(std::min<int64_t>(outer, 132 * 16)), kThreads, 0, st>>>(
                px, py, outer, n, inner);
      else
        softmaxKernel<K, S, M>
            <<<blocksFor(outer * inner), kThreads, 0, st>>>(px, py, outer, n, inner);
      return launched(name);
    });
  };
}

inline bool softmaxRowApplies(const AttrMap& a, std::span<const TensorDesc> in,
                              std::span<const TensorDesc> out) {
  if (!allLinear(in, out)) return false;
  int64_t outer, n, inner;
  softmaxGeometry(a, in[0].dims, &outer, &n, &inner);
  return inner == 1;
}

template <SoftmaxKind K>
auto softmaxTactics(const char* name) {
  return [=](OpDef& d) {
    d.tactic(1, "cuda.warp", softmaxFn<K, SoftMode::kWarp>(name), softmaxRowApplies);
    d.tactic(2, "cuda.block", softmaxFn<K, SoftMode::kBlock>(name), softmaxRowApplies);
    d.tactic(3, "cuda.column", softmaxFn<K, SoftMode::kColumn>(name), linearOnly);
  };
}

}  // namespace opforge::ops
