// argreduce_cuda.cuh — ArgMax / ArgMin on the device: the index of the first (or, with
// select_last_index, the last) extreme value along the axis; a NaN wins, the first NaN if several
// (the reference stops at the first NaN). A warp per line when the axis is innermost, else a thread
// per line (consecutive threads read consecutive addresses).
#pragma once

#include "reduce_cuda.cuh"

namespace opforge::ops {

template <typename C>
struct ArgPair {
  C v;
  int64_t j;
};

// Whether (v, j) beats (bv, bj) for the reference's sequential scan seen as a reduction.
template <bool kMax, typename C>
__device__ __forceinline__ bool argBetter(C v, int64_t j, C bv, int64_t bj, bool last) {
  if (bj < 0) return true;
  if (j < 0) return false;
  const bool vn = dm::isnan(v), bn = dm::isnan(bv);
  if (vn || bn) return vn && (!bn || j < bj);
  if (v == bv) return last ? j > bj : j < bj;
  return kMax ? v > bv : v < bv;
}

template <bool kMax, typename S>
__global__ void __launch_bounds__(kThreads)
    argWarpKernel(const S* __restrict__ x, int64_t* __restrict__ y, int64_t lines, int64_t n,
                  bool last) {
  using C = typename DNum<S>::C;
  const int lane = threadIdx.x & 31;
  const int64_t warps = int64_t(gridDim.x) * (blockDim.x >> 5);
  for (int64_t l = int64_t(blockIdx.x) * (blockDim.x >> 5) + (threadIdx.x >> 5); l < lines;
       l += warps) {
    const S* row = x + l * n;
    C bv{};
    int64_t bj = -1;
    for (int64_t j = lane; j < n; j += 32) {
      const C v = DNum<S>::load(row[j]);
      if (argBetter<kMax>(v, j, bv, bj, last)) bv = v, bj = j;
    }
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) {
      const C ov = __shfl_down_sync(0xffffffffu, bv, o);
      const int64_t oj = __shfl_down_sync(0xffffffffu, bj, o);
      if (argBetter<kMax>(ov, oj, bv, bj, last)) bv = ov, bj = oj;
    }
    if (lane == 0) y[l] = bj < 0 ? 0 : bj;
  }
}

template <bool kMax, typename S>
__global__ void __launch_bounds__(kThreads)
    argThreadKernel(const S* __restrict__ x, int64_t* __restrict__ y, int64_t outer, int64_t n,
                    int64_t inner, bool last) {
  using C = typename DNum<S>::C;
  const int64_t lines = outer * inner, stride = int64_t(gridDim.x) * blockDim.x;
  for (int64_t l = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; l < lines; l += stride) {
    const int64_t o = l / inner, i = l - o * inner;
    const S* base = x + o * n * inner + i;
    C bv = DNum<S>::load(base[0]);
    int64_t bj = 0;
    for (int64_t j = 1; j < n; ++j) {
      if (dm::isnan(bv)) break;
      const C v = DNum<S>::load(base[j * inner]);
      if (argBetter<kMax>(v, j, bv, bj, last)) bv = v, bj = j;
    }
    y[l] = bj;
  }
}

template <bool kMax, bool kWarp>
KernelFn argFn(const char* name) {
  return
      [name](KernelContext& k, std::span<const Tensor> in, std::span<const Tensor> out) -> Status {
        const Tensor& x = in[0];
        const int r = x.desc.rank();
        const int axis = wrapAxis(k.attr<int64_t>("axis"), r);
        const bool last = k.attr<int64_t>("select_last_index") != 0;
        const int64_t outer = prodOf(x.desc.dims, 0, axis), n = x.desc.dims[axis],
                      inner = prodOf(x.desc.dims, axis + 1, r);
        if (outer * inner == 0) return Status::ok();
        return visitDevice<kNumeric>(x.desc.dtype, name, [&](auto tag) -> Status {
          using S = typename decltype(tag)::type;
          auto* py = static_cast<int64_t*>(out[0].data);
          if constexpr (kWarp)
            argWarpKernel<kMax, S><<<blocksFor(outer * 32), kThreads, 0, streamOf(k)>>>(
                static_cast<const S*>(x.data), py, outer, n, last);
          else
            argThreadKernel<kMax, S><<<blocksFor(outer * inner), kThreads, 0, streamOf(k)>>>(
                static_cast<const S*>(x.data), py, outer, n, inner, last);
          return launched(name);
        });
      };
}

// The warp tactic needs the axis innermost (inner == 1).
inline bool argWarpApplies(const AttrMap& a, std::span<const TensorDesc> in,
                           std::span<const TensorDesc> out) {
  if (!allLinear(in, out)) return false;
  const int r = in[0].rank();
  const int axis = wrapAxis(a.get<int64_t>("axis"), r);
  return prodOf(in[0].dims, axis + 1, r) == 1;
}

template <bool kMax>
auto argTactics(const char* name) {
  return [=](OpDef& d) {
    d.tactic(1, "cuda.thread", argFn<kMax, false>(name), linearOnly);
    d.tactic(2, "cuda.warp", argFn<kMax, true>(name), argWarpApplies);
  };
}

}  // namespace opforge::ops
