// norm_cuda.cuh — the normalizations on the device: a warp or a block per normalized row computes
// the mean (two passes: mean, then the centred sum of squares, as the reference) in float (double
// for FP64), then writes (x - mean) * rsqrt(var + eps) * scale + bias. A policy type says where a
// row's scale and bias come from (LayerNormalization, RMSNormalization, InstanceNormalization,
// GroupNormalization) and which statistics outputs to write.
#pragma once

#include "cuda_common.cuh"
#include "dmath.cuh"

namespace opforge::ops {

template <typename S>
using NormT = std::conditional_t<std::is_same_v<S, double>, double, float>;

template <typename T>
__device__ __forceinline__ T warpSumAll(T v) {
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
  return v;
}

// Sum over the cooperating threads: a warp (lanes == 32) or the whole block.
template <typename T>
__device__ __forceinline__ T groupSum(T v, bool block, T* red) {
  v = warpSumAll(v);
  if (!block) return v;
  const int lane = threadIdx.x & 31, w = threadIdx.x >> 5, nw = blockDim.x >> 5;
  __syncthreads();
  if (lane == 0) red[w] = v;
  __syncthreads();
  T r = 0;
  for (int i = 0; i < nw; ++i) r += red[i];
  return r;
}

// Reads a float parameter of any float dtype (BatchNormalization's statistics may differ from X).
__device__ __forceinline__ double loadFloatAny(const void* p, int dtype, int64_t i) {
  switch (dtype) {
    case 1: return static_cast<const float*>(p)[i];
    case 11: return static_cast<const double*>(p)[i];
    case 10: return __half2float(static_cast<const __half*>(p)[i]);
    case 16: return __bfloat162float(static_cast<const __nv_bfloat16*>(p)[i]);
    default: return 0.0;
  }
}

// Policy: T scale(row, i), T bias(row, i), bool rms, double eps, void stats(row, mean, inv).
template <typename S, typename P, bool kBlock>
__global__ void __launch_bounds__(kThreads) rowNormKernel(const S* __restrict__ x, S* __restrict__ y, int64_t rows,
                                                         int64_t n, P p) {
  using T = NormT<S>;
  __shared__ T red[32];
  const int lane = kBlock ? static_cast<int>(threadIdx.x) : static_cast<int>(threadIdx.x & 31);
  const int lanes = kBlock ? static_cast<int>(blockDim.x) : 32;
  const int64_t first = kBlock ? int64_t(blockIdx.x) : int64_t(blockIdx.x) * (blockDim.x >> 5) + (threadIdx.x >> 5);
  const int64_t step = kBlock ? int64_t(gridDim.x) : int64_t(gridDim.x) * (blockDim.x >> 5);
  for (int64_t r = first; r < rows; r += step) {
    const S* xr = x + r * n;
    T mean = 0;
    if (!p.rms) {
      T s = 0;
      for (int64_t i = lane; i < n; i += lanes) s += static_cast<T>(DNum<S>::load(xr[i]));
      mean = groupSum(s, kBlock, red) / static_cast<T>(n);
    }
    T q = 0;
    for (int64_t i = lane; i < n; i += lanes) {
      const T d = static_cast<T>(DNum<S>::load(xr[i])) - mean;
      q += d * d;
    }
    const T var = groupSum(q, kBlock, red) / static_cast<T>(n);
    const T inv = static_cast<T>(1) / dm::sqrt(var + static_cast<T>(p.eps));
    S* yr = y + r * n;
    for (int64_t i = lane; i < n; i += lanes) {
      const T v = (static_cast<T>(DNum<S>::load(xr[i])) - mean) * inv * p.scale(r, i) + p.bias(r, i);
      yr[i] = DNum<S>::store(static_cast<typename DNum<S>::C>(v));
    }
    if (lane == 0) p.stats(r, mean, inv);
  }
}

template <typename S, typename P>
Status launchRowNorm(const void* x, void* y, int64_t rows, int64_t n, const P& p, bool block, cudaStream_t st,
                     const char* op) {
  if (rows == 0 || n == 0) return Status::ok();
  if (block)
    rowNormKernel<S, P, true><<<static_cast<unsigned>(std::min<int64_t>(rows, 132 * 16)), kThreads, 0, st>>>(
        static_cast<const S*>(x), static_cast<S*>(y), rows, n, p);
  else
    rowNormKernel<S, P, false><<<blocksFor(rows * 32), kThreads, 0, st>>>(static_cast<const S*>(x), static_cast<S*>(y),
                                                                          rows, n, p);
  return launched(op);
}

}  // namespace opforge::ops
