// CUDA tactics of ai.onnx::TopK (k from the planned output's shape; sorted; equal values keep the
// lower index first, as the reference):
//   1 cuda.segsort  every line sorted with cub::DeviceSegmentedRadixSort (stable, so ties keep
//   index
//                   order; lines along a non-innermost axis are transposed into rows first), then
//                   the first k of each row copied out;
//   2 cuda.select   a warp per line picks the k elements one after the other in the (value, index)
//                   order (k <= 64): no workspace, good for small k.
// NaN has no defined place in the reference's order; it is not given one here either.
#include <thrust/iterator/counting_iterator.h>
#include <thrust/iterator/transform_iterator.h>
#include <cub/device/device_segmented_radix_sort.cuh>

#include "../common/kernel_axis.h"
#include "../common/movement.cuh"

namespace opforge::ops {
namespace {

struct Geom {
  int64_t outer, n, inner, k;
};

Result<Geom> geomOf(const AttrMap& a, const TensorDesc& x, const TensorDesc& v) {
  const int r = x.rank();
  OPFORGE_ASSIGN_OR_RETURN(const int axis, kernelAxis(a.get<int64_t>("axis"), r));
  if (v.rank() != r) return Status::invalid("TopK: the values output's rank differs from X's");
  return Geom{prodOf(x.dims, 0, axis), x.dims[axis], prodOf(x.dims, axis + 1, r), v.dims[axis]};
}

struct MulBy {
  int64_t n;
  __host__ __device__ int operator()(int64_t i) const { return static_cast<int>(i * n); }
};
using OffsetIt = thrust::transform_iterator<MulBy, thrust::counting_iterator<int64_t>, int>;

constexpr size_t kAlign = 256;
size_t up(size_t v) {
  return (v + kAlign - 1) / kAlign * kAlign;
}

template <typename S>
size_t sortTemp(int64_t total, int64_t lines, int64_t n, bool largest) {
  size_t bytes = 0;
  OffsetIt b(thrust::counting_iterator<int64_t>(0), MulBy{n});
  if (largest)
    cub::DeviceSegmentedRadixSort::SortPairsDescending(
        nullptr, bytes, static_cast<const S*>(nullptr), static_cast<S*>(nullptr),
        static_cast<const int64_t*>(nullptr), static_cast<int64_t*>(nullptr),
        static_cast<int>(total), static_cast<int>(lines), b, b + 1);
  else
    cub::DeviceSegmentedRadixSort::SortPairs(
        nullptr, bytes, static_cast<const S*>(nullptr), static_cast<S*>(nullptr),
        static_cast<const int64_t*>(nullptr), static_cast<int64_t*>(nullptr),
        static_cast<int>(total), static_cast<int>(lines), b, b + 1);
  return bytes;
}

// Workspace: keys (transposed copy, only when inner > 1), keys out, indices in, indices out, temp.
template <typename S>
size_t segsortBytes(const Geom& g, bool largest) {
  const int64_t total = g.outer * g.n * g.inner, lines = g.outer * g.inner;
  return up(total * sizeof(S)) * 2 + up(total * sizeof(int64_t)) * 2 +
         up(sortTemp<S>(total, lines, g.n, largest));
}

__global__ void iotaModKernel(int64_t* __restrict__ v, int64_t total, int64_t n) {
  const int64_t stride = int64_t(gridDim.x) * blockDim.x;
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < total; i += stride)
    v[i] = i % n;
}

// Sorted rows [outer, inner, n] -> outputs [outer, k, inner].
template <typename S>
__global__ void takeKernel(const S* __restrict__ keys, const int64_t* __restrict__ idx,
                           S* __restrict__ vy, int64_t* __restrict__ iy, Geom g) {
  const int64_t total = g.outer * g.k * g.inner, stride = int64_t(gridDim.x) * blockDim.x;
  for (int64_t t = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; t < total; t += stride) {
    const int64_t i = t % g.inner, j = (t / g.inner) % g.k, o = t / (g.inner * g.k);
    const int64_t src = (o * g.inner + i) * g.n + j;
    vy[t] = keys[src];
    iy[t] = idx[src];
  }
}

template <typename S>
Status segsort(KernelContext& kc, const Tensor& x, const Tensor& vy, const Tensor& iy,
               const Geom& g, bool largest) {
  const int64_t total = g.outer * g.n * g.inner, lines = g.outer * g.inner;
  cudaStream_t st = streamOf(kc);
  auto* base = static_cast<uint8_t*>(kc.workspace());
  S* keys_t = reinterpret_cast<S*>(base);
  S* keys_out = reinterpret_cast<S*>(base + up(total * sizeof(S)));
  auto* idx_in = reinterpret_cast<int64_t*>(base + 2 * up(total * sizeof(S)));
  auto* idx_out =
      reinterpret_cast<int64_t*>(base + 2 * up(total * sizeof(S)) + up(total * sizeof(int64_t)));
  void* temp = base + 2 * up(total * sizeof(S)) + 2 * up(total * sizeof(int64_t));
  size_t temp_bytes = up(sortTemp<S>(total, lines, g.n, largest));
  const S* keys_in = static_cast<const S*>(x.data);
  if (g.inner > 1) {
    OPFORGE_RETURN_IF_ERROR(
        launchPermute(x.data, keys_t, sizeof(S), {g.outer, g.n, g.inner}, {0, 2, 1}, st, "TopK"));
    keys_in = keys_t;
  }
  iotaModKernel<<<blocksFor(total), kThreads, 0, st>>>(idx_in, total, g.n);
  OPFORGE_RETURN_IF_ERROR(launched("TopK"));
  OffsetIt b(thrust::counting_iterator<int64_t>(0), MulBy{g.n});
  cudaError_t e;
  if (largest)
    e = cub::DeviceSegmentedRadixSort::SortPairsDescending(
        temp, temp_bytes, keys_in, keys_out, idx_in, idx_out, static_cast<int>(total),
        static_cast<int>(lines), b, b + 1, 0, sizeof(S) * 8, st);
  else
    e = cub::DeviceSegmentedRadixSort::SortPairs(
        temp, temp_bytes, keys_in, keys_out, idx_in, idx_out, static_cast<int>(total),
        static_cast<int>(lines), b, b + 1, 0, sizeof(S) * 8, st);
  OPFORGE_RETURN_IF_ERROR(cudaStatus(e, "TopK sort"));
  takeKernel<S><<<blocksFor(g.outer * g.k * g.inner), kThreads, 0, st>>>(
      keys_out, idx_out, static_cast<S*>(vy.data), static_cast<int64_t*>(iy.data), g);
  return launched("TopK");
}

// (a, ja) comes before (b, jb) in the output order.
template <typename C>
__device__ __forceinline__ bool topBefore(C a, int64_t ja, C b, int64_t jb, bool largest) {
  if (a == b) return ja < jb;
  return largest ? a > b : a < b;
}

template <typename S>
__global__ void __launch_bounds__(kThreads)
    selectKernel(const S* __restrict__ x, S* __restrict__ vy, int64_t* __restrict__ iy, Geom g,
                 bool largest) {
  using C = typename DNum<S>::C;
  const int lane = threadIdx.x & 31;
  const int64_t lines = g.outer * g.inner, warps = int64_t(gridDim.x) * (blockDim.x >> 5);
  for (int64_t l = int64_t(blockIdx.x) * (blockDim.x >> 5) + (threadIdx.x >> 5); l < lines;
       l += warps) {
    const int64_t o = l / g.inner, i = l - o * g.inner;
    const S* line = x + o * g.n * g.inner + i;
    C pv{};
    int64_t pj = -1;  // the previous pick
    for (int64_t t = 0; t < g.k; ++t) {
      C bv{};
      int64_t bj = -1;
      for (int64_t j = lane; j < g.n; j += 32) {
        const C v = DNum<S>::load(line[j * g.inner]);
        if (pj >= 0 && !topBefore(pv, pj, v, j, largest)) continue;  // already picked
        if (bj < 0 || topBefore(v, j, bv, bj, largest)) bv = v, bj = j;
      }
#pragma unroll
      for (int off = 16; off > 0; off >>= 1) {
        const C ov = __shfl_xor_sync(0xffffffffu, bv, off);
        const int64_t oj = __shfl_xor_sync(0xffffffffu, bj, off);
        if (oj >= 0 && (bj < 0 || topBefore(ov, oj, bv, bj, largest))) bv = ov, bj = oj;
      }
      if (lane == 0) {
        const int64_t at = (o * g.k + t) * g.inner + i;
        vy[at] = DNum<S>::store(bv);
        iy[at] = bj;
      }
      pv = bv;
      pj = bj;
    }
  }
}

constexpr int64_t kSelectMaxK = 64;

template <bool kSort>
Status topkCuda(KernelContext& k, std::span<const Tensor> in, std::span<const Tensor> out) {
  OPFORGE_ASSIGN_OR_RETURN(const Geom g, geomOf(k.attrs(), in[0].desc, out[0].desc));
  if (g.k > g.n)
    return Status::outOfRange("K = " + std::to_string(g.k) + " exceeds the axis size " +
                              std::to_string(g.n));
  if (g.outer * g.k * g.inner == 0) return Status::ok();
  const bool largest = k.attr<int64_t>("largest") != 0;
  return visitDevice<kNumeric>(in[0].desc.dtype, "TopK", [&](auto tag) -> Status {
    using S = typename decltype(tag)::type;
    if constexpr (kSort) {
      return segsort<S>(k, in[0], out[0], out[1], g, largest);
    } else {
      selectKernel<S><<<blocksFor(g.outer * g.inner * 32), kThreads, 0, streamOf(k)>>>(
          static_cast<const S*>(in[0].data), static_cast<S*>(out[0].data),
          static_cast<int64_t*>(out[1].data), g, largest);
      return launched("TopK");
    }
  });
}

// A K read from run-time data (a hidden size-tensor output) is left to the CPU reference.
bool sortApplies(const AttrMap& a, std::span<const TensorDesc> in,
                 std::span<const TensorDesc> out) {
  return out.size() == 2 && allLinear(in, out) && in[0].numel() < (int64_t{1} << 30);
}
bool selectApplies(const AttrMap& a, std::span<const TensorDesc> in,
                   std::span<const TensorDesc> out) {
  if (out.size() != 2 || !allLinear(in, out)) return false;
  auto g = geomOf(a, in[0], out[0]);
  return g && g->k <= kSelectMaxK;
}
size_t sortWorkspace(const AttrMap& a, std::span<const TensorDesc> in,
                     std::span<const TensorDesc> out) {
  auto geom = geomOf(a, in[0], out[0]);
  if (!geom) return 0;
  const Geom g = *geom;
  size_t bytes = 0;
  (void)visitDevice<kNumeric>(in[0].dtype, "TopK", [&](auto tag) -> Status {
    bytes = segsortBytes<typename decltype(tag)::type>(g, a.get<int64_t>("largest") != 0);
    return Status::ok();
  });
  return bytes;
}
}  // namespace

OPFORGE_TACTICS("ai.onnx::TopK", [](OpDef& d) {
  d.tactic(1, "cuda.segsort", topkCuda<true>, sortApplies, sortWorkspace);
  d.tactic(2, "cuda.select", topkCuda<false>, selectApplies);
});

}  // namespace opforge::ops
