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
    case 1:
      return static_cast<const float*>(p)[i];
    case 11:
      return static_cast<const double*>(p)[i];
    case 10:
      return __half2float(static_cast<const __half*>(p)[i]);
    case 16:
      return __bfloat162float(static_cast<const __nv_bfloat16*>(p)[i]);
    default:
      return 0.0;
  }
}

// Policy: T scale(row, i), T bias(row, i), bool rms, double eps, void stats(row, mean, inv).
// res: nullptr, or a second input of x's shape added to x first (opforge::FusedAddLayerNorm);
// sum: nullptr, or where x + res is written too (its Sum output).
template <typename S, typename P, bool kBlock>
__global__ void __launch_bounds__(kThreads)
    rowNormKernel(const S* __restrict__ x, const S* __restrict__ res, S* __restrict__ y,
                  int64_t rows, int64_t n, P p, S* __restrict__ sum) {
  using T = NormT<S>;
  __shared__ T red[32];
  const int lane = kBlock ? static_cast<int>(threadIdx.x) : static_cast<int>(threadIdx.x & 31);
  const int lanes = kBlock ? static_cast<int>(blockDim.x) : 32;
  const int64_t first =
      kBlock ? int64_t(blockIdx.x) : int64_t(blockIdx.x) * (blockDim.x >> 5) + (threadIdx.x >> 5);
  const int64_t step = kBlock ? int64_t(gridDim.x) : int64_t(gridDim.x) * (blockDim.x >> 5);
  for (int64_t r = first; r < rows; r += step) {
    const S* xr = x + r * n;
    const S* rr = res ? res + r * n : nullptr;
    auto at = [&](int64_t i) -> T {
      T v = static_cast<T>(DNum<S>::load(xr[i]));
      if (rr) v += static_cast<T>(DNum<S>::load(rr[i]));
      return v;
    };
    T mean = 0;
    if (!p.rms) {
      T s = 0;
      for (int64_t i = lane; i < n; i += lanes) s += at(i);
      mean = groupSum(s, kBlock, red) / static_cast<T>(n);
    }
    T q = 0;
    for (int64_t i = lane; i < n; i += lanes) {
      const T d = at(i) - mean;
      q += d * d;
    }
    const T var = groupSum(q, kBlock, red) / static_cast<T>(n);
    const T inv = static_cast<T>(1) / dm::sqrt(var + static_cast<T>(p.eps));
    S* yr = y + r * n;
    S* sr = sum ? sum + r * n : nullptr;
    for (int64_t i = lane; i < n; i += lanes) {
      const T a = at(i);
      if (sr) sr[i] = DNum<S>::store(static_cast<typename DNum<S>::C>(a));
      const T v = (a - mean) * inv * p.scale(r, i) + p.bias(r, i);
      yr[i] = DNum<S>::store(static_cast<typename DNum<S>::C>(v));
    }
    if (lane == 0) p.stats(r, mean, inv);
  }
}

template <typename S, typename P>
Status launchRowNorm(const void* x, void* y, int64_t rows, int64_t n, const P& p, bool block,
                     cudaStream_t st, const char* op, const void* res = nullptr,
                     void* sum = nullptr) {
  if (rows == 0 || n == 0) return Status::ok();
  if (block)
    rowNormKernel<S, P, true>
        <<<static_cast<unsigned>(std::min<int64_t>(rows, 132 * 16)), kThreads, 0, st>>>(
            static_cast<const S*>(x), static_cast<const S*>(res), static_cast<S*>(y), rows, n, p,
            static_cast<S*>(sum));
  else
    rowNormKernel<S, P, false><<<blocksFor(rows * 32), kThreads, 0, st>>>(
        static_cast<const S*>(x), static_cast<const S*>(res), static_cast<S*>(y), rows, n, p,
        static_cast<S*>(sum));
  return launched(op);
}

// LayerNormalization's policy: scale and bias broadcast over the normalized shape.
template <typename S>
struct LayerNormP {
  using T = NormT<S>;
  const S* scale_p;
  const S* bias_p;
  S* mean_out;
  S* inv_out;
  StridedShape<2> pb;  // offsets of scale (0) and bias (1) over the normalized shape
  bool contiguous;     // both offsets are the position itself
  double eps;
  bool rms = false;
  __device__ int64_t off(int64_t i, int which) const {
    if (contiguous) return i;
    int64_t o[2];
    offsetsOf<2, int64_t>(pb, i, o);
    return o[which];
  }
  __device__ T scale(int64_t, int64_t i) const {
    return static_cast<T>(DNum<S>::load(scale_p[off(i, 0)]));
  }
  __device__ T bias(int64_t, int64_t i) const {
    return bias_p ? static_cast<T>(DNum<S>::load(bias_p[off(i, 1)])) : T(0);
  }
  __device__ void stats(int64_t r, T mean, T inv) const {
    if (mean_out) mean_out[r] = DNum<S>::store(static_cast<typename DNum<S>::C>(mean));
    if (inv_out) inv_out[r] = DNum<S>::store(static_cast<typename DNum<S>::C>(inv));
  }
};

// LayerNormalization's parameters but the broadcast of Scale and B: their pointers, the optional
// Mean / InvStdDev outputs (out[1], out[2]) when non-empty, epsilon.
template <typename S>
LayerNormP<S> layerNormParams(KernelContext& k, const Tensor& scale, const Tensor* bias,
                              std::span<const Tensor> out) {
  LayerNormP<S> p{};
  p.scale_p = static_cast<const S*>(scale.data);
  p.bias_p = bias ? static_cast<const S*>(bias->data) : nullptr;
  p.mean_out = out.size() > 1 && out[1].numel() > 0 ? static_cast<S*>(out[1].data) : nullptr;
  p.inv_out = out.size() > 2 && out[2].numel() > 0 ? static_cast<S*>(out[2].data) : nullptr;
  p.eps = k.attr<double>("epsilon");
  return p;
}

// LayerNormalization of x (+ res) over the axes from `axis` (attribute), scale / bias broadcast
// over the normalized shape, the optional Mean / InvStdDev outputs (out[1], out[2]) when non-empty;
// x + res also into `sum` when given.
inline Status launchLayerNorm(KernelContext& k, const Tensor& x, const Tensor* res,
                              const Tensor& scale, const Tensor* bias, std::span<const Tensor> out,
                              bool block, const char* op, void* sum = nullptr) {
  const int r = x.desc.rank();
  const int axis = wrapAxis(k.attr<int64_t>("axis"), r);
  const int64_t rows = prodOf(x.desc.dims, 0, axis), n = prodOf(x.desc.dims, axis, r);
  const std::vector<int64_t> norm(x.desc.dims.begin() + axis, x.desc.dims.end());
  return visitDevice<kFloats>(x.desc.dtype, op, [&](auto tag) -> Status {
    using S = typename decltype(tag)::type;
    LayerNormP<S> p = layerNormParams<S>(k, scale, bias, out);
    p.contiguous = scale.numel() == n && (!bias || bias->numel() == n);
    if (!p.contiguous && !coalesce<2>(norm,
                                      {broadcastStrides(scale.desc.dims, norm),
                                       bias ? broadcastStrides(bias->desc.dims, norm)
                                            : std::vector<int64_t>(norm.size(), 0)},
                                      &p.pb))
      return Status::unsupported(std::string(op) + " (CUDA): more than " +
                                 std::to_string(kMaxDims) + " axes");
    if (!p.contiguous && p.pb.rank == 0)
      p.pb.rank = 1, p.pb.dims[0] = 1, p.pb.strides[0][0] = p.pb.strides[1][0] = 0;
    return launchRowNorm<S>(x.data, out[0].data, rows, n, p, block, streamOf(k), op,
                            res ? res->data : nullptr, sum);
  });
}

}  // namespace opforge::ops

namespace opforge::ops {

// LayerNormalization with the row in registers: G lanes per row (a warp holds 32 / G rows), each
// lane holding up to kVecs 16-byte vectors of it (x, + res), so X is read once and every access
// is 16 bytes wide (the element-wise warp kernel above reads the row three times, 2 bytes a lane
// with FP16). G is the fewest lanes that hold the row in at most 4 vectors a lane: ConvNeXt's
// FP16 rows of 96 channels (12 vectors) take 4 lanes, not 12 of 32 with 20 idle. The same
// two-pass statistics in float. For rows of n = 32 * V * kVecs elements at most, n % V == 0,
// Scale and B of the normalized shape (contiguous), 16-byte aligned tensors.
constexpr int kNormMaxVecs = 16;

// Sum over the G lanes of a row's group (G a power of two up to 32; every lane of the warp calls).
template <int G, typename T>
__device__ __forceinline__ T groupSumOf(T v) {
#pragma unroll
  for (int o = G / 2; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
  return v;
}

template <typename S, int kVecs, int G>
__global__ void __launch_bounds__(kThreads)
    layerNormVecKernel(const S* __restrict__ x, const S* __restrict__ res, S* __restrict__ y,
                       int64_t rows, int64_t n, LayerNormP<S> p, S* __restrict__ sum) {
  using T = NormT<S>;
  constexpr int V = 16 / sizeof(S);
  using Pack = Vec<S, V>;
  const int lane = static_cast<int>(threadIdx.x % G);
  const int64_t vecs = n / V;
  // Warp-uniform loop: every lane reaches the shuffles, a group past the last row idles in them.
  constexpr int kRowsPerWarp = 32 / G;
  const int64_t step = int64_t(gridDim.x) * (blockDim.x >> 5) * kRowsPerWarp;
  for (int64_t base = (int64_t(blockIdx.x) * (blockDim.x >> 5) + (threadIdx.x >> 5)) * kRowsPerWarp;
       base < rows; base += step) {
    const int64_t r = base + static_cast<int>((threadIdx.x & 31) / G);
    const bool live = r < rows;
    const Pack* xr = reinterpret_cast<const Pack*>(x + r * n);
    const Pack* rr = res ? reinterpret_cast<const Pack*>(res + r * n) : nullptr;
    Pack* sr = sum ? reinterpret_cast<Pack*>(sum + r * n) : nullptr;
    T v[kVecs][V];
    T total = 0;
#pragma unroll
    for (int j = 0; j < kVecs; ++j) {
      const int64_t c = lane + int64_t(j) * G;
      if (live && c < vecs) {
        const Pack px = xr[c];
        Pack pr{};
        if (rr) pr = rr[c];
#pragma unroll
        for (int e = 0; e < V; ++e) {
          v[j][e] = static_cast<T>(DNum<S>::load(px.v[e]));
          if (rr) v[j][e] += static_cast<T>(DNum<S>::load(pr.v[e]));
          total += v[j][e];
        }
        if (sr) {  // FusedAddLayerNorm's Sum; LayerNormalization never pays the rounding
          Pack ps;
#pragma unroll
          for (int e = 0; e < V; ++e)
            ps.v[e] = DNum<S>::store(static_cast<typename DNum<S>::C>(v[j][e]));
          sr[c] = ps;
        }
      }
    }
    const T mean = p.rms ? T(0) : groupSumOf<G>(total) / static_cast<T>(n);
    T q = 0;
#pragma unroll
    for (int j = 0; j < kVecs; ++j)
      if (live && lane + int64_t(j) * G < vecs)
#pragma unroll
        for (int e = 0; e < V; ++e) {
          const T d = v[j][e] - mean;
          q += d * d;
        }
    const T var = groupSumOf<G>(q) / static_cast<T>(n);
    if (!live) continue;
    const T inv = static_cast<T>(1) / dm::sqrt(var + static_cast<T>(p.eps));
    Pack* yr = reinterpret_cast<Pack*>(y + r * n);
#pragma unroll
    for (int j = 0; j < kVecs; ++j) {
      const int64_t c = lane + int64_t(j) * G;
      if (c < vecs) {
        const Pack ps = reinterpret_cast<const Pack*>(p.scale_p)[c];
        Pack pb{};
        if (p.bias_p) pb = reinterpret_cast<const Pack*>(p.bias_p)[c];
        Pack py;
#pragma unroll
        for (int e = 0; e < V; ++e) {
          T o = (v[j][e] - mean) * inv * static_cast<T>(DNum<S>::load(ps.v[e]));
          if (p.bias_p) o += static_cast<T>(DNum<S>::load(pb.v[e]));
          py.v[e] = DNum<S>::store(static_cast<typename DNum<S>::C>(o));
        }
        yr[c] = py;
      }
    }
    if (lane == 0) p.stats(r, mean, inv);
  }
}

// Whether the register kernel takes this LayerNormalization (X, Scale, B as the op has them).
inline bool layerNormVecApplies(const AttrMap& at, const TensorDesc& x, const TensorDesc& scale,
                                const TensorDesc* bias) {
  const int r = x.rank();
  if (r < 1 || !at.has("axis")) return false;
  const int axis = wrapAxis(at.get<int64_t>("axis"), r);
  if (axis < 0 || axis >= r) return false;
  const int64_t n = prodOf(x.dims, axis, r);
  const size_t es = dtypeSize(x.dtype);
  if (es == 0 || 16 % es != 0) return false;
  const int64_t v = 16 / static_cast<int64_t>(es);
  return n > 0 && n % v == 0 && n / v <= int64_t{32} * kNormMaxVecs && scale.numel() == n &&
         (!bias || bias->numel() == n);
}

// The register kernel, or kUnsupported where it does not apply (unaligned tensors included).
inline Status launchLayerNormVec(KernelContext& k, const Tensor& x, const Tensor* res,
                                 const Tensor& scale, const Tensor* bias,
                                 std::span<const Tensor> out, const char* op, void* sum = nullptr) {
  if (!layerNormVecApplies(k.attrs(), x.desc, scale.desc, bias ? &bias->desc : nullptr))
    return Status::unsupported(std::string(op) + " cuda.warp_vec: not a row it takes");
  const void* const ptrs[] = {
      x.data, res ? res->data : nullptr, scale.data, bias ? bias->data : nullptr, out[0].data, sum};
  for (const void* q : ptrs)
    if (q && !aligned16(q))
      return Status::unsupported(std::string(op) + " cuda.warp_vec: needs 16-byte aligned tensors");
  const int r = x.desc.rank();
  const int axis = wrapAxis(k.attr<int64_t>("axis"), r);
  const int64_t rows = prodOf(x.desc.dims, 0, axis), n = prodOf(x.desc.dims, axis, r);
  if (rows == 0) return Status::ok();
  return visitDevice<kFloats>(x.desc.dtype, op, [&](auto tag) -> Status {
    using S = typename decltype(tag)::type;
    constexpr int V = 16 / sizeof(S);
    LayerNormP<S> p = layerNormParams<S>(k, scale, bias, out);
    p.contiguous = true;
    const auto* px = static_cast<const S*>(x.data);
    const auto* pr = res ? static_cast<const S*>(res->data) : nullptr;
    auto* py = static_cast<S*>(out[0].data);
    auto* ps = static_cast<S*>(sum);
    const int64_t vecs = n / V;
    cudaStream_t st = streamOf(k);
    // G: the fewest lanes a row (a power of two) that hold it in 4 vectors a lane; rows longer
    // than 128 vectors take the whole warp and up to kNormMaxVecs vectors a lane.
    const auto go = [&](auto kernel, int g) {
      kernel<<<blocksFor((rows + 32 / g - 1) / (32 / g) * 32), kThreads, 0, st>>>(px, pr, py, rows,
                                                                                  n, p, ps);
    };
    if (vecs <= 4 * 4)
      go(layerNormVecKernel<S, 4, 4>, 4);
    else if (vecs <= 4 * 8)
      go(layerNormVecKernel<S, 4, 8>, 8);
    else if (vecs <= 4 * 16)
      go(layerNormVecKernel<S, 4, 16>, 16);
    else if (vecs <= 4 * 32)
      go(layerNormVecKernel<S, 4, 32>, 32);
    else if (vecs <= 8 * 32)
      go(layerNormVecKernel<S, 8, 32>, 32);
    else
      go(layerNormVecKernel<S, kNormMaxVecs, 32>, 32);
    return launched(op);
  });
}

}  // namespace opforge::ops
