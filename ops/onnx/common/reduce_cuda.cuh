// reduce_cuda.cuh — the Reduce* family on the device (and the statistics GlobalAveragePool /
// GlobalMaxPool share). Same accumulation types as the reference (common/reduce.h): floats in
// double, signed integers in int64, unsigned in uint64; the same identities for empty
// reductions; max and min propagate NaN.
//
// The reduced axes may come from an input on the device (ReduceSum since opset 13, the others
// since 18): a one-thread kernel then builds the geometry in the workspace from the `axes` values.
// Geometry: an output element's kept coordinates give its base offset in the input, a counter over
// the reduced elements their offsets (both coalesced, so the common "last axes" case is one
// stride-1 loop). Three tactics share it: a block, a warp or a thread per output element.
#pragma once

#include <math_constants.h>

#include "cuda_common.cuh"
#include "dmath.cuh"
#include "reduce.h"

namespace opforge::ops {

struct ReduceGeom {  // trivial (it lives in shared memory); zero-initialise on the host
  int kr, rr;
  int64_t kcount, rcount;  // outputs and reduced elements per output the geometry describes
  int64_t kdims[kMaxDims], kstr[kMaxDims];  // output index -> input offset
  int64_t rdims[kMaxDims], rstr[kMaxDims];  // reduced index -> input offset
};

// Builds the geometry for input dims xd (rank <= kMaxDims) and the reduced-axis mask.
__host__ __device__ inline void buildReduceGeom(int rank, const int64_t* xd, const bool* mask,
                                                ReduceGeom* g) {
  int64_t xs[kMaxDims];
  int64_t s = 1;
  for (int a = rank - 1; a >= 0; --a) {
    xs[a] = s;
    s *= xd[a];
  }
  g->kr = g->rr = 0;
  g->kcount = g->rcount = 1;
  for (int a = 0; a < rank; ++a) {
    (mask[a] ? g->rcount : g->kcount) *= xd[a];
    if (xd[a] == 1) continue;
    int64_t* dims = mask[a] ? g->rdims : g->kdims;
    int64_t* str = mask[a] ? g->rstr : g->kstr;
    int& n = mask[a] ? g->rr : g->kr;
    if (n > 0 && str[n - 1] == xs[a] * xd[a]) {
      dims[n - 1] *= xd[a];
      str[n - 1] = xs[a];
    } else {
      dims[n] = xd[a];
      str[n] = xs[a];
      ++n;
    }
  }
}

// Axes values on the device -> geometry in the workspace. Out-of-range values were rejected when
// the plan was built (the shape rule reads them), so they are skipped here.
static __global__ void reduceGeomKernel(const void* axes, bool a64, int naxes, int rank,
                                        ReduceGeom host_dims, ReduceGeom* out) {
  bool mask[kMaxDims];
  int64_t xd[kMaxDims];
  for (int a = 0; a < rank; ++a) mask[a] = false, xd[a] = host_dims.kdims[a];
  for (int i = 0; i < naxes; ++i) {
    int64_t ax = loadIndex(axes, a64, i);
    if (ax < -rank || ax >= rank) continue;
    mask[ax < 0 ? ax + rank : ax] = true;
  }
  buildReduceGeom(rank, xd, mask, out);
}

__device__ __forceinline__ int64_t offsetIn(int64_t i, int rank, const int64_t* dims,
                                            const int64_t* str) {
  if (rank == 1) return i * str[0];
  int64_t off = 0;
  for (int a = rank - 1; a >= 0; --a) {
    const int64_t q = i / dims[a];
    off += (i - q * dims[a]) * str[a];
    i = q;
  }
  return off;
}

// ---------------------------------------------------------------------------------------------
// Accumulation
// ---------------------------------------------------------------------------------------------

template <typename S>
using ReduceAcc =
    std::conditional_t<std::is_floating_point_v<typename DNum<S>::C>, double,
                       std::conditional_t<std::is_same_v<S, Bool8>, int32_t,
                                          std::conditional_t<std::is_signed_v<typename DNum<S>::C>,
                                                             int64_t, uint64_t>>>;

template <ReduceKind K, typename S>
struct RedOp {
  using C = typename DNum<S>::C;
  using Acc = ReduceAcc<S>;
  static constexpr bool kFloat = std::is_floating_point_v<Acc>;

  __device__ static Acc init() {
    if constexpr (K == ReduceKind::kProd) return Acc(1);
    if constexpr (K == ReduceKind::kMax || K == ReduceKind::kLogSumExp) {
      if constexpr (kFloat)
        return -CUDART_INF;
      else if constexpr (std::is_same_v<S, Bool8>)
        return 0;
      else
        return static_cast<Acc>(std::numeric_limits<C>::lowest());
    }
    if constexpr (K == ReduceKind::kMin) {
      if constexpr (kFloat)
        return CUDART_INF;
      else if constexpr (std::is_same_v<S, Bool8>)
        return 1;
      else
        return static_cast<Acc>(std::numeric_limits<C>::max());
    }
    return Acc(0);
  }
  __device__ static Acc map(S s) {
    const Acc v = static_cast<Acc>(DNum<S>::load(s));
    if constexpr (K == ReduceKind::kL1) {
      if constexpr (std::is_unsigned_v<Acc>)
        return v;
      else
        return v < 0 ? -v : v;
    }
    if constexpr (K == ReduceKind::kL2 || K == ReduceKind::kSumSquare) return v * v;
    return v;
  }
  __device__ static Acc combine(Acc a, Acc b) {
    if constexpr (K == ReduceKind::kMax || K == ReduceKind::kMin || K == ReduceKind::kLogSumExp) {
      if constexpr (kFloat) {
        if (a != a) return a;
        if (b != b) return b;
      }
      if constexpr (K == ReduceKind::kMin)
        return b < a ? b : a;
      else
        return a < b ? b : a;
    } else if constexpr (K == ReduceKind::kProd) {
      return a * b;
    } else {
      return a + b;
    }
  }
  __device__ static S finalize(Acc v, int64_t count) {
    if constexpr (K == ReduceKind::kMean) {
      if constexpr (kFloat)
        v = count ? v / static_cast<Acc>(count) : CUDART_NAN;
      else
        v = count ? static_cast<Acc>(v / static_cast<Acc>(count)) : Acc(0);
    }
    if constexpr (K == ReduceKind::kL2) v = static_cast<Acc>(::sqrt(static_cast<double>(v)));
    if constexpr (K == ReduceKind::kLogSum) v = static_cast<Acc>(::log(static_cast<double>(v)));
    if constexpr (std::is_same_v<S, Bool8>)
      return Bool8{static_cast<uint8_t>(v != 0 ? 1 : 0)};
    else
      return DNum<S>::store(static_cast<C>(v));
  }
};

template <typename T>
__device__ __forceinline__ T shflDown(T v, int o) {
  return __shfl_down_sync(0xffffffffu, v, o);
}

// Warp-wide combine; lane 0 holds the result.
template <typename Op, typename Acc>
__device__ __forceinline__ Acc warpCombine(Acc v) {
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) v = Op::combine(v, shflDown(v, o));
  return v;
}

// Block-wide combine (blockDim.x a multiple of 32, at most 1024); every thread gets the result.
template <typename Op, typename Acc>
__device__ Acc blockCombine(Acc v, Acc* smem /* [32] */) {
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, nw = blockDim.x >> 5;
  v = warpCombine<Op>(v);
  __syncthreads();
  if (lane == 0) smem[warp] = v;
  __syncthreads();
  if (warp == 0) {
    Acc w = lane < nw ? smem[lane] : Op::init();
    w = warpCombine<Op>(w);
    if (lane == 0) smem[0] = w;
  }
  __syncthreads();
  return smem[0];
}

enum class ReduceMode { kBlock, kWarp, kThread };

// One output element's reduction by `lanes` cooperating threads (lane in [0, lanes)); the result
// is valid in lane 0 (kWarp) / every thread (kBlock) / the thread (kThread).
template <ReduceKind K, typename S, ReduceMode M>
__device__ __forceinline__ ReduceAcc<S> reduceOne(const S* __restrict__ x, const ReduceGeom& g,
                                                  int64_t base, int64_t count, int lane, int lanes,
                                                  ReduceAcc<S>* smem) {
  using Op = RedOp<K, S>;
  using MaxOp = RedOp<ReduceKind::kMax, S>;
  using Acc = ReduceAcc<S>;
  if constexpr (K == ReduceKind::kLogSumExp) {
    // Pass 1: the maximum; pass 2: sum of exp(x - max) when the maximum is finite.
    Acc m = MaxOp::init();
    for (int64_t t = lane; t < count; t += lanes)
      m = MaxOp::combine(m, MaxOp::map(x[base + offsetIn(t, g.rr, g.rdims, g.rstr)]));
    if constexpr (M == ReduceMode::kWarp) m = __shfl_sync(0xffffffffu, warpCombine<MaxOp>(m), 0);
    if constexpr (M == ReduceMode::kBlock) m = blockCombine<MaxOp>(m, smem);
    const bool finite = !::isinf(static_cast<double>(m)) && m == m;
    double s = 0;
    if (finite)
      for (int64_t t = lane; t < count; t += lanes)
        s += ::exp(
            static_cast<double>(DNum<S>::load(x[base + offsetIn(t, g.rr, g.rdims, g.rstr)])) - m);
    using SumOp = RedOp<ReduceKind::kSum, double>;
    if constexpr (M == ReduceMode::kWarp) s = warpCombine<SumOp>(s);
    if constexpr (M == ReduceMode::kBlock)
      s = blockCombine<SumOp>(s, reinterpret_cast<double*>(smem));
    return finite ? static_cast<Acc>(m + ::log(s)) : m;
  } else {
    Acc a = Op::init();
    for (int64_t t = lane; t < count; t += lanes)
      a = Op::combine(a, Op::map(x[base + offsetIn(t, g.rr, g.rdims, g.rstr)]));
    if constexpr (M == ReduceMode::kWarp) a = warpCombine<Op>(a);
    if constexpr (M == ReduceMode::kBlock) a = blockCombine<Op>(a, smem);
    return a;
  }
}

template <ReduceKind K, typename S, ReduceMode M>
__global__ void __launch_bounds__(kThreads)
    reduceKernel(const S* __restrict__ x, S* __restrict__ y, ReduceGeom gv,
                 const ReduceGeom* __restrict__ gdev, int64_t ny, int64_t count) {
  using Acc = ReduceAcc<S>;
  __shared__ ReduceGeom g;
  __shared__ Acc smem[32];
  if (threadIdx.x == 0) g = gdev ? *gdev : gv;
  __syncthreads();
  // Axes read on the device that do not give the planned shape (never the case for a checked
  // plan; the autotuner's zero-filled inputs can): nothing is read.
  if (g.kcount != ny || g.rcount != count) return;
  using Op = RedOp<K, S>;
  if constexpr (M == ReduceMode::kBlock) {
    for (int64_t j = blockIdx.x; j < ny; j += gridDim.x) {
      const Acc a = reduceOne<K, S, M>(x, g, offsetIn(j, g.kr, g.kdims, g.kstr), count, threadIdx.x,
                                       blockDim.x, smem);
      if (threadIdx.x == 0) y[j] = Op::finalize(a, count);
      __syncthreads();
    }
  } else if constexpr (M == ReduceMode::kWarp) {
    const int lane = threadIdx.x & 31;
    const int64_t warps = int64_t(gridDim.x) * (blockDim.x >> 5);
    for (int64_t j = int64_t(blockIdx.x) * (blockDim.x >> 5) + (threadIdx.x >> 5); j < ny;
         j += warps) {
      const Acc a =
          reduceOne<K, S, M>(x, g, offsetIn(j, g.kr, g.kdims, g.kstr), count, lane, 32, smem);
      if (lane == 0) y[j] = Op::finalize(a, count);
    }
  } else {
    const int64_t stride = int64_t(gridDim.x) * blockDim.x;
    for (int64_t j = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; j < ny; j += stride)
      y[j] = Op::finalize(
          reduceOne<K, S, M>(x, g, offsetIn(j, g.kr, g.kdims, g.kstr), count, 0, 1, smem), count);
  }
}

// Host: the geometry when the reduced axes are known here (mask), else a device build from the
// axes tensor into `ws` (then the returned pointer is the device copy).
struct ReducePlan {
  ReduceGeom host{};
  const ReduceGeom* dev = nullptr;
  int64_t ny = 0, count = 0;
  bool noop = false;
};

template <ReduceKind K, typename S, ReduceMode M>
Status launchReduce(const Tensor& x, const Tensor& y, const ReducePlan& p, cudaStream_t st,
                    const char* op) {
  if (p.ny == 0) return Status::ok();
  if (p.noop) return copyDevice(y.data, x.data, y.bytes(), st, op);
  unsigned grid;
  if constexpr (M == ReduceMode::kBlock)
    grid = static_cast<unsigned>(std::min<int64_t>(p.ny, 132 * 16));
  else if constexpr (M == ReduceMode::kWarp)
    grid = blocksFor(p.ny * 32);
  else
    grid = blocksFor(p.ny);
  reduceKernel<K, S, M><<<grid, kThreads, 0, st>>>(
      static_cast<const S*>(x.data), static_cast<S*>(y.data), p.host, p.dev, p.ny, p.count);
  return launched(op);
}

// ---------------------------------------------------------------------------------------------
// The Reduce* tactics
// ---------------------------------------------------------------------------------------------

inline size_t reduceWorkspace(const AttrMap&, std::span<const TensorDesc> in,
                              std::span<const TensorDesc>) {
  return in.size() > 1 && in[1].dtype != DataType::kUndefined ? sizeof(ReduceGeom) : 0;
}

inline bool reduceApplies(const AttrMap& a, std::span<const TensorDesc> in,
                          std::span<const TensorDesc> out) {
  return allLinear(in, out) && in[0].rank() <= kMaxDims;
}

// Plans one run: from the attribute / absent axes on the host, or the device axes input.
inline Result<ReducePlan> planReduce(KernelContext& k, std::span<const Tensor> in,
                                     std::span<const Tensor> out) {
  ReducePlan p;
  const Tensor& x = in[0];
  const int r = x.desc.rank();
  p.ny = out[0].numel();
  p.count = p.ny == 0 ? 0 : x.numel() / p.ny;
  const bool from_input = hasIn(in, 1);
  const int64_t naxes =
      from_input ? in[1].numel()
                 : (k.attrs().has("axes")
                        ? static_cast<int64_t>(k.attr<std::vector<int64_t>>("axes").size())
                        : 0);
  if (naxes == 0 && k.attr<int64_t>("noop_with_empty_axes") != 0) {
    p.noop = true;
    return p;
  }
  bool mask[kMaxDims];
  for (int a = 0; a < r; ++a) mask[a] = naxes == 0;
  if (!from_input || naxes == 0) {
    if (naxes > 0)
      for (int64_t a : k.attr<std::vector<int64_t>>("axes"))
        if (a >= -r && a < r) mask[wrapAxis(a, r)] = true;
    buildReduceGeom(r, x.desc.dims.data(), mask, &p.host);
    return p;
  }
  ReduceGeom dims{};
  for (int a = 0; a < r; ++a) dims.kdims[a] = x.desc.dims[a];
  auto* ws = static_cast<ReduceGeom*>(k.workspace());
  if (!ws) return Status::internal("reduction: no workspace for the device geometry");
  reduceGeomKernel<<<1, 1, 0, streamOf(k)>>>(in[1].data, in[1].desc.dtype == DataType::kInt64,
                                             static_cast<int>(naxes), r, dims, ws);
  OPFORGE_RETURN_IF_ERROR(launched("reduction axes"));
  p.dev = ws;
  return p;
}

template <ReduceKind K, unsigned Types, ReduceMode M>
KernelFn reduceFn(const char* name) {
  return
      [name](KernelContext& k, std::span<const Tensor> in, std::span<const Tensor> out) -> Status {
        OPFORGE_ASSIGN_OR_RETURN(ReducePlan p, planReduce(k, in, out));
        return visitDevice<Types>(in[0].desc.dtype, name, [&](auto tag) -> Status {
          using S = typename decltype(tag)::type;
          return launchReduce<K, S, M>(in[0], out[0], p, streamOf(k), name);
        });
      };
}

template <ReduceKind K, unsigned Types>
auto reduceTactics(const char* name) {
  return [=](OpDef& d) {
    d.tactic(1, "cuda.block", reduceFn<K, Types, ReduceMode::kBlock>(name), reduceApplies,
             reduceWorkspace);
    d.tactic(2, "cuda.warp", reduceFn<K, Types, ReduceMode::kWarp>(name), reduceApplies,
             reduceWorkspace);
    d.tactic(3, "cuda.thread", reduceFn<K, Types, ReduceMode::kThread>(name), reduceApplies,
             reduceWorkspace);
  };
}

}  // namespace opforge::ops
