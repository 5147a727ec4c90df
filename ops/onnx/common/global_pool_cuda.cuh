// global_pool_cuda.cuh — GlobalAveragePool / GlobalMaxPool on the device: the mean /
// NaN-propagating maximum over the spatial axes of every (n, c), through the reduction kernels
// (double accumulation, like the reference).
#pragma once

#include "../../common/vec.cuh"
#include "reduce_cuda.cuh"

namespace opforge::ops {

template <ReduceKind K, ReduceMode M>
KernelFn globalPoolFn(const char* name) {
  return
      [name](KernelContext& k, std::span<const Tensor> in, std::span<const Tensor> out) -> Status {
        const Tensor& x = in[0];
        const int r = x.desc.rank();
        ReducePlan p;
        p.ny = out[0].numel();
        p.count = prodOf(x.desc.dims, 2, r);
        bool mask[kMaxDims];
        for (int a = 0; a < r; ++a) mask[a] = a >= 2;
        buildReduceGeom(r, x.desc.dims.data(), mask, &p.host);
        return visitDevice<kFloats>(x.desc.dtype, name, [&](auto tag) -> Status {
          using S = typename decltype(tag)::type;
          return launchReduce<K, S, M>(x, out[0], p, streamOf(k), name);
        });
      };
}

// ---------------------------------------------------------------------------------------------
// Channels-last (tactic 4, cuda.hwc): x is [N, S, C] in memory. A block takes one image and a
// tile of channels: `lanes` threads across the tile's 16-byte channel groups (coalesced), the
// other threads of the block across S; shared memory combines them. Where images x tiles would
// leave the GPU idle (batch 1), gridDim.z splits S and a second kernel combines the parts.
// Accumulates in double (float for FP16 / BF16); the maximum propagates NaN as the reference does.
// ---------------------------------------------------------------------------------------------

template <typename S>
using PoolAcc = std::conditional_t<sizeof(S) >= 4, double, float>;

struct HwcPoolGeom {
  int64_t n, c, sp, chunk;  // images, channels, spatial size, positions per z-part
  int lanes, splits;        // threads across a tile, parts of S
  unsigned tiles;
};

// v: elements a thread loads at once (1, or 16 bytes of them where C and x's address allow).
inline HwcPoolGeom hwcPoolGeom(const std::vector<int64_t>& d, int v) {
  HwcPoolGeom g{};
  g.n = d[0];
  g.c = d[1];
  g.sp = prodOf(d, 2, static_cast<int>(d.size()));
  const int64_t groups = (g.c + v - 1) / v;
  g.lanes = 1;
  while (g.lanes < 32 && g.lanes < groups) g.lanes *= 2;
  g.tiles = static_cast<unsigned>((groups + g.lanes - 1) / g.lanes);
  const int64_t rows = kThreads / g.lanes, blocks = std::max<int64_t>(1, g.tiles * g.n);
  // About two blocks an SM, each part at least four positions a thread.
  const int64_t z = std::clamp<int64_t>(
      std::min<int64_t>((2 * int64_t(cuvec::smCount()) + blocks - 1) / blocks, g.sp / (4 * rows)),
      1, 1024);
  g.chunk = std::max<int64_t>((g.sp + z - 1) / z, 1);
  g.splits = static_cast<int>(std::max<int64_t>((g.sp + g.chunk - 1) / g.chunk, 1));
  return g;
}

template <bool kMax, typename T>
__device__ __forceinline__ T poolCombine(T a, T b) {
  if constexpr (kMax)
    return (b > a || b != b) && a == a ? b : a;
  else
    return a + b;
}

// part: nullptr (one part: y gets the result) or [splits, N, C] partial results.
template <bool kMax, typename S, int V>
__global__ void __launch_bounds__(kThreads)
    globalPoolHwcKernel(const S* __restrict__ x, S* __restrict__ y, PoolAcc<S>* __restrict__ part,
                        HwcPoolGeom g) {
  using T = PoolAcc<S>;
  __shared__ T red[kThreads * V];
  const int lane = threadIdx.x % g.lanes, row = threadIdx.x / g.lanes, rows = kThreads / g.lanes;
  const int64_t c0 = (int64_t(blockIdx.x) * g.lanes + lane) * V;
  const int64_t s0 = int64_t(blockIdx.z) * g.chunk, s1 = s0 + g.chunk < g.sp ? s0 + g.chunk : g.sp;
  const T init = kMax ? T(-CUDART_INF) : T(0);
  for (int64_t b = blockIdx.y; b < g.n; b += gridDim.y) {
    T acc[V];
    for (int e = 0; e < V; ++e) acc[e] = init;
    if (c0 < g.c) {
      const S* xb = x + b * g.sp * g.c + c0;
      for (int64_t s = s0 + row; s < s1; s += rows) {
        if constexpr (V > 1) {
          const Vec<S, V> p = *reinterpret_cast<const Vec<S, V>*>(xb + s * g.c);
          for (int e = 0; e < V; ++e)
            acc[e] = poolCombine<kMax>(acc[e], static_cast<T>(DNum<S>::load(p.v[e])));
        } else {
          acc[0] = poolCombine<kMax>(acc[0], static_cast<T>(DNum<S>::load(xb[s * g.c])));
        }
      }
    }
    for (int e = 0; e < V; ++e) red[threadIdx.x * V + e] = acc[e];
    __syncthreads();
    if (row == 0 && c0 < g.c) {
      for (int r = 1; r < rows; ++r)
        for (int e = 0; e < V; ++e)
          acc[e] = poolCombine<kMax>(acc[e], red[(r * g.lanes + lane) * V + e]);
      for (int e = 0; e < V && c0 + e < g.c; ++e) {
        if (part) {
          part[(int64_t(blockIdx.z) * g.n + b) * g.c + c0 + e] = acc[e];
        } else {
          const T r = kMax ? acc[e] : acc[e] / static_cast<T>(g.sp);
          y[b * g.c + c0 + e] = DNum<S>::store(static_cast<typename DNum<S>::C>(r));
        }
      }
    }
    __syncthreads();
  }
}

template <bool kMax, typename S>
__global__ void globalPoolPartsKernel(const PoolAcc<S>* __restrict__ part, S* __restrict__ y,
                                      HwcPoolGeom g) {
  using T = PoolAcc<S>;
  const int64_t nc = g.n * g.c, stride = int64_t(gridDim.x) * blockDim.x;
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < nc; i += stride) {
    T a = part[i];
    for (int z = 1; z < g.splits; ++z) a = poolCombine<kMax>(a, part[int64_t(z) * nc + i]);
    if constexpr (!kMax) a /= static_cast<T>(g.sp);
    y[i] = DNum<S>::store(static_cast<typename DNum<S>::C>(a));
  }
}

inline bool globalPoolHwcApplies(const AttrMap&, std::span<const TensorDesc> in,
                                 std::span<const TensorDesc>) {
  return in[0].format == Format::kHWC && in[0].rank() >= 3 && in[0].dims[0] <= (int64_t{1} << 31);
}

// The parts buffer, for either vector width (the address decides at run time).
inline size_t globalPoolHwcWorkspace(const AttrMap&, std::span<const TensorDesc> in,
                                     std::span<const TensorDesc>) {
  if (in[0].rank() < 3 || !isFloatType(in[0].dtype)) return 0;
  const size_t es = dtypeSize(in[0].dtype), acc = es >= 4 ? 8 : 4;
  size_t most = 0;
  for (int v : {1, static_cast<int>(16 / es)}) {
    const HwcPoolGeom g = hwcPoolGeom(in[0].dims, v);
    if (g.splits > 1) most = std::max(most, size_t(g.splits) * g.n * g.c * acc);
  }
  return most;
}

template <bool kMax>
KernelFn globalPoolHwcFn(const char* name) {
  return
      [name](KernelContext& k, std::span<const Tensor> in, std::span<const Tensor> out) -> Status {
        const Tensor& x = in[0];
        if (out[0].numel() == 0) return Status::ok();
        return visitDevice<kFloats>(x.desc.dtype, name, [&](auto tag) -> Status {
          using S = typename decltype(tag)::type;
          using T = PoolAcc<S>;
          constexpr int kV = 16 / sizeof(S);
          const bool vec = x.desc.dims[1] % kV == 0 && aligned16(x.data);
          const HwcPoolGeom g = hwcPoolGeom(x.desc.dims, vec ? kV : 1);  // S empty: NaN / -inf
          cudaStream_t st = streamOf(k);
          T* part = g.splits > 1 ? static_cast<T*>(k.workspace()) : nullptr;
          if (g.splits > 1 && k.workspaceSize() < size_t(g.splits) * g.n * g.c * sizeof(T))
            return Status::internal(std::string(name) + " cuda.hwc: workspace too small");
          const dim3 grid(g.tiles, static_cast<unsigned>(std::min<int64_t>(g.n, 65535)),
                          static_cast<unsigned>(g.splits));
          auto* px = static_cast<const S*>(x.data);
          auto* py = static_cast<S*>(out[0].data);
          if (vec)
            globalPoolHwcKernel<kMax, S, kV><<<grid, kThreads, 0, st>>>(px, py, part, g);
          else
            globalPoolHwcKernel<kMax, S, 1><<<grid, kThreads, 0, st>>>(px, py, part, g);
          if (part)
            globalPoolPartsKernel<kMax, S><<<blocksFor(g.n * g.c), kThreads, 0, st>>>(part, py, g);
          return launched(name);
        });
      };
}

template <ReduceKind K>
auto globalPoolTactics(const char* name) {
  return [=](OpDef& d) {
    d.tactic(1, "cuda.block", globalPoolFn<K, ReduceMode::kBlock>(name), reduceApplies);
    d.tactic(2, "cuda.warp", globalPoolFn<K, ReduceMode::kWarp>(name), reduceApplies);
    d.tactic(3, "cuda.thread", globalPoolFn<K, ReduceMode::kThread>(name), reduceApplies);
    d.tactic(4, "cuda.hwc", globalPoolHwcFn<K == ReduceKind::kMax>(name), globalPoolHwcApplies,
             globalPoolHwcWorkspace);
  };
}

}  // namespace opforge::ops
