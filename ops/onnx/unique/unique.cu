// CUDA tactic of ai.onnx::Unique, cuda.pairwise: comparisons of every slice with every earlier one
// (O(n^2) slice comparisons; applies up to 2^16 slices, beyond that the layer runs on the CPU):
//   1. a thread per slice j finds first[j], the first slice equal to it (unique.h's order);
//   2. cub::DeviceScan numbers the first occurrences in input order (slot for sorted = 0) and
//      writes U into the size tensor; for sorted = 1 a thread per first occurrence counts the
//      first occurrences that sort before it (its slot);
//   3. a thread per slice writes its inverse index and adds 1 to its entry's count (integer
//      atomics: exact); a thread per element of the first occurrences copies it to Y and writes
//      the index. Nothing synchronizes: U stays on the device.
#include <cub/device/device_scan.cuh>

#include "unique.h"

#include "../common/cuda_common.cuh"

namespace opforge::ops {
namespace {

struct Geom {
  int64_t outer, len, inner;
  bool sorted;
};
Geom geomOf(const AttrMap& a, const TensorDesc& x) {
  Geom g{1, 1, 1, a.get<int64_t>("sorted") != 0};
  const auto& d = x.dims;
  const int r = x.rank();
  if (!a.has("axis")) {
    g.len = prodOf(d, 0, r);
    return g;
  }
  const int ax = wrapAxis(a.get<int64_t>("axis"), r);
  g.outer = prodOf(d, 0, ax);
  g.len = d[ax];
  g.inner = prodOf(d, ax + 1, r);
  return g;
}

template <typename S>
__device__ __forceinline__ int compareSlices(const S* __restrict__ x, const Geom& g, int64_t a,
                                             int64_t b) {
  const int64_t m = g.outer * g.inner;
  for (int64_t e = 0; e < m; ++e) {
    const int64_t base = (e / g.inner) * g.len * g.inner + e % g.inner;
    const int c =
        uniqueCompare(DNum<S>::load(x[base + a * g.inner]), DNum<S>::load(x[base + b * g.inner]));
    if (c != 0) return c;
  }
  return 0;
}

template <typename S>
__global__ void firstKernel(const S* __restrict__ x, Geom g, int64_t* __restrict__ first,
                            int64_t* __restrict__ is_first) {
  const int64_t stride = int64_t(gridDim.x) * blockDim.x;
  for (int64_t j = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; j < g.len; j += stride) {
    int64_t f = j;
    for (int64_t i = 0; i < j; ++i)
      if (compareSlices(x, g, i, j) == 0) {
        f = i;
        break;
      }
    first[j] = f;
    is_first[j] = f == j ? 1 : 0;
  }
}

// Sorted: the slot of first occurrence j is the number of first occurrences that sort before it.
template <typename S>
__global__ void rankKernel(const S* __restrict__ x, Geom g, const int64_t* __restrict__ is_first,
                           int64_t* __restrict__ slot) {
  const int64_t stride = int64_t(gridDim.x) * blockDim.x;
  for (int64_t j = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; j < g.len; j += stride) {
    if (!is_first[j]) continue;
    int64_t r = 0;
    for (int64_t i = 0; i < g.len; ++i) r += is_first[i] && compareSlices(x, g, i, j) < 0;
    slot[j] = r;
  }
}

__global__ void countKernel(const int64_t* __restrict__ first, const int64_t* __restrict__ slot,
                            const int64_t* __restrict__ u, int64_t* __restrict__ idx,
                            int64_t* __restrict__ inv, unsigned long long* __restrict__ counts,
                            int64_t n) {
  const int64_t stride = int64_t(gridDim.x) * blockDim.x;
  for (int64_t j = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; j < n; j += stride) {
    const int64_t s = slot[first[j]];
    inv[j] = s;
    if (s < *u) {
      atomicAdd(counts + s, 1ull);
      if (first[j] == j) idx[s] = j;
    }
  }
}

template <typename S>
__global__ void copyKernel(const S* __restrict__ x, S* __restrict__ y,
                           const int64_t* __restrict__ first, const int64_t* __restrict__ slot,
                           const int64_t* __restrict__ u_ptr, Geom g) {
  const int64_t u = *u_ptr, total = g.outer * g.len * g.inner,
                stride = int64_t(gridDim.x) * blockDim.x;
  for (int64_t t = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; t < total; t += stride) {
    const int64_t i = t % g.inner, j = (t / g.inner) % g.len, o = t / (g.inner * g.len);
    if (first[j] != j) continue;
    y[(o * u + slot[j]) * g.inner + i] = x[t];
  }
}

constexpr size_t kAlign = 256;
size_t up(size_t v) {
  return (v + kAlign - 1) / kAlign * kAlign;
}
size_t scanBytes(int64_t n) {
  size_t bytes = 0;
  cub::DeviceScan::ExclusiveSum(nullptr, bytes, static_cast<const int64_t*>(nullptr),
                                static_cast<int64_t*>(nullptr), n);
  return bytes;
}
// Workspace: first, is_first, slot (all [n] INT64), the scan's temp.
size_t workspaceOf(int64_t n) {
  return 3 * up(static_cast<size_t>(n) * sizeof(int64_t)) + up(scanBytes(n));
}

// U = the scan's last entry + whether the last slice is a first occurrence.
__global__ void totalKernel(const int64_t* __restrict__ scan, const int64_t* __restrict__ is_first,
                            int64_t n, int64_t* __restrict__ u) {
  *u = n == 0 ? 0 : scan[n - 1] + is_first[n - 1];
}

Status uniqueCuda(KernelContext& k, std::span<const Tensor> in, std::span<const Tensor> out) {
  const Geom g = geomOf(k.attrs(), in[0].desc);
  cudaStream_t st = streamOf(k);
  const int64_t n = g.len;
  auto* u = static_cast<int64_t*>(out[4].data);
  auto* counts = static_cast<unsigned long long*>(out[3].data);
  // Counts are accumulated: zero them (the capacity, n entries).
  OPFORGE_RETURN_IF_ERROR(cudaStatus(
      cudaMemsetAsync(counts, 0, static_cast<size_t>(out[3].desc.dims[0]) * 8, st), "Unique"));
  if (n == 0) return cudaStatus(cudaMemsetAsync(u, 0, sizeof(int64_t), st), "Unique");
  auto* base = static_cast<uint8_t*>(k.workspace());
  const size_t col = up(static_cast<size_t>(n) * sizeof(int64_t));
  auto* first = reinterpret_cast<int64_t*>(base);
  auto* is_first = reinterpret_cast<int64_t*>(base + col);
  auto* slot = reinterpret_cast<int64_t*>(base + 2 * col);
  void* temp = base + 3 * col;
  return visitDevice<kNumeric | kBools>(in[0].desc.dtype, "Unique", [&](auto tag) -> Status {
    using S = typename decltype(tag)::type;
    const auto* x = static_cast<const S*>(in[0].data);
    firstKernel<S><<<blocksFor(n, 128), 128, 0, st>>>(x, g, first, is_first);
    OPFORGE_RETURN_IF_ERROR(launched("Unique"));
    size_t temp_bytes = scanBytes(n);
    OPFORGE_RETURN_IF_ERROR(cudaStatus(
        cub::DeviceScan::ExclusiveSum(temp, temp_bytes, is_first, slot, n, st), "Unique scan"));
    totalKernel<<<1, 1, 0, st>>>(slot, is_first, n, u);
    OPFORGE_RETURN_IF_ERROR(launched("Unique"));
    if (g.sorted) {
      rankKernel<S><<<blocksFor(n, 128), 128, 0, st>>>(x, g, is_first, slot);
      OPFORGE_RETURN_IF_ERROR(launched("Unique"));
    }
    countKernel<<<blocksFor(n), kThreads, 0, st>>>(first, slot, u,
                                                   static_cast<int64_t*>(out[1].data),
                                                   static_cast<int64_t*>(out[2].data), counts, n);
    OPFORGE_RETURN_IF_ERROR(launched("Unique"));
    const int64_t total = in[0].numel();
    copyKernel<S>
        <<<blocksFor(total), kThreads, 0, st>>>(x, static_cast<S*>(out[0].data), first, slot, u, g);
    return launched("Unique");
  });
}

bool uniqueApplies(const AttrMap& a, std::span<const TensorDesc> in,
                   std::span<const TensorDesc> out) {
  return allLinear(in, out) && geomOf(a, in[0]).len <= (int64_t{1} << 16);
}

size_t uniqueWorkspace(const AttrMap& a, std::span<const TensorDesc> in,
                       std::span<const TensorDesc>) {
  return workspaceOf(geomOf(a, in[0]).len);
}
}  // namespace

OPFORGE_TACTICS("ai.onnx::Unique", [](OpDef& d) {
  d.tactic(1, "cuda.pairwise", uniqueCuda, uniqueApplies, uniqueWorkspace);
});

}  // namespace opforge::ops
