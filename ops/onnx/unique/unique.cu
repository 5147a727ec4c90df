// CUDA tactics of ai.onnx::Unique. Both find, for every slice j, first[j] (the first slice equal
// to it, unique.h's order), the output slot of each first occurrence and U (written into the size
// tensor); then the same two kernels finish: a thread per slice writes its inverse index and adds
// 1 to its entry's count (integer atomics: exact), a thread per element of the first occurrences
// copies it to Y and writes the index. Nothing synchronizes: U stays on the device.
//   1 cuda.pairwise  every slice against every earlier one (O(n^2) slice comparisons; up to 2^16
//                    slices): cub::DeviceScan numbers the first occurrences in input order (the
//                    slots for sorted = 0); for sorted = 1 a thread per first occurrence counts
//                    the first occurrences that sort before it;
//   2 cuda.sort      O(n log n): a stable merge sort of the slice indices by their slices
//                    (cub::DeviceMergeSort), so each run of equal slices starts at its first
//                    occurrence; run heads numbered by a scan (the slots for sorted = 1); for
//                    sorted = 0 the runs' first indices radix-sorted give the slots.
#include <cub/device/device_merge_sort.cuh>
#include <cub/device/device_radix_sort.cuh>
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

// Both tactics (uniqueCuda): the counts zeroed (they are accumulated; the capacity, n entries),
// U = 0 for no slices; else a search (pairwiseFirsts, sortFirsts) returns first[] and slot[]
// (unique.h's order) with U written, and the inverse, counts, indices and Y follow.
struct Firsts {
  int64_t *first = nullptr, *slot = nullptr;
};
template <typename S>
Result<Firsts> pairwiseFirsts(const S* x, const Geom& g, int64_t* u, uint8_t* base,
                              cudaStream_t st) {
  const int64_t n = g.len;
  const size_t col = up(static_cast<size_t>(n) * sizeof(int64_t));
  Firsts f{reinterpret_cast<int64_t*>(base), reinterpret_cast<int64_t*>(base + 2 * col)};
  auto* is_first = reinterpret_cast<int64_t*>(base + col);
  void* temp = base + 3 * col;
  firstKernel<S><<<blocksFor(n, 128), 128, 0, st>>>(x, g, f.first, is_first);
  OPFORGE_RETURN_IF_ERROR(launched("Unique"));
  size_t temp_bytes = scanBytes(n);
  OPFORGE_RETURN_IF_ERROR(cudaStatus(
      cub::DeviceScan::ExclusiveSum(temp, temp_bytes, is_first, f.slot, n, st), "Unique scan"));
  totalKernel<<<1, 1, 0, st>>>(f.slot, is_first, n, u);
  OPFORGE_RETURN_IF_ERROR(launched("Unique"));
  if (g.sorted) {
    rankKernel<S><<<blocksFor(n, 128), 128, 0, st>>>(x, g, is_first, f.slot);
    OPFORGE_RETURN_IF_ERROR(launched("Unique"));
  }
  return f;
}

bool uniqueApplies(const AttrMap& a, std::span<const TensorDesc> in,
                   std::span<const TensorDesc> out) {
  return allLinear(in, out) && geomOf(a, in[0]).len <= (int64_t{1} << 16);
}

size_t uniqueWorkspace(const AttrMap& a, std::span<const TensorDesc> in,
                       std::span<const TensorDesc>) {
  return workspaceOf(geomOf(a, in[0]).len);
}

// ---- cuda.sort ---------------------------------------------------------------------------------

template <typename S>
struct SliceLess {
  const S* x;
  Geom g;
  __device__ bool operator()(int64_t a, int64_t b) const { return compareSlices(x, g, a, b) < 0; }
};

__global__ void iotaKernel(int64_t* __restrict__ v, int64_t n) {
  const int64_t stride = int64_t(gridDim.x) * blockDim.x;
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) v[i] = i;
}

// head[k] = 1 where sorted position k starts a run of equal slices.
template <typename S>
__global__ void headKernel(const S* __restrict__ x, Geom g, const int64_t* __restrict__ order,
                           int64_t* __restrict__ head) {
  const int64_t stride = int64_t(gridDim.x) * blockDim.x;
  for (int64_t k = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; k < g.len; k += stride)
    head[k] = k == 0 || compareSlices(x, g, order[k - 1], order[k]) != 0 ? 1 : 0;
}

// run[k] = the run number + 1 of sorted position k (an inclusive scan of the heads). The first
// index of run r is order at its head (the sort is stable); U = run[n - 1].
__global__ void runFirstKernel(const int64_t* __restrict__ order, const int64_t* __restrict__ head,
                               const int64_t* __restrict__ run, int64_t n,
                               int64_t* __restrict__ run_first, int64_t* __restrict__ u) {
  const int64_t stride = int64_t(gridDim.x) * blockDim.x;
  for (int64_t k = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; k < n; k += stride) {
    if (head[k]) run_first[run[k] - 1] = order[k];
    if (k == n - 1) *u = run[k];
  }
}

// first[j] for every slice; for sorted = 1 the slot of a first occurrence is its run number.
__global__ void firstOfKernel(const int64_t* __restrict__ order, const int64_t* __restrict__ run,
                              const int64_t* __restrict__ run_first, int64_t n, bool sorted,
                              int64_t* __restrict__ first, int64_t* __restrict__ slot) {
  const int64_t stride = int64_t(gridDim.x) * blockDim.x;
  for (int64_t k = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; k < n; k += stride) {
    const int64_t r = run[k] - 1, f = run_first[r];
    first[order[k]] = f;
    if (sorted && order[k] == f) slot[f] = r;
  }
}

// sorted = 0: keys = the runs' first indices (n past U, so they sort last), values = run numbers.
__global__ void runKeysKernel(const int64_t* __restrict__ run_first, const int64_t* __restrict__ u,
                              int64_t n, int64_t* __restrict__ keys) {
  const int64_t stride = int64_t(gridDim.x) * blockDim.x, count = *u;
  for (int64_t r = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; r < n; r += stride)
    keys[r] = r < count ? run_first[r] : n;
}

// After the radix sort, position p holds the p-th first occurrence in input order: its slot is p.
__global__ void slotOfKernel(const int64_t* __restrict__ keys, int64_t n,
                             int64_t* __restrict__ slot) {
  const int64_t stride = int64_t(gridDim.x) * blockDim.x;
  for (int64_t p = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; p < n; p += stride)
    if (keys[p] < n) slot[keys[p]] = p;
}

struct SortSpace {
  // [n] INT64 columns: order, head, run, run_first, first, slot, keys_out; then the temp storage
  // of the merge sort, the scan and the radix sort (one region, the largest).
  static constexpr int kColumns = 7;
  size_t col = 0, temp = 0;
  size_t total() const { return kColumns * col + up(temp); }
};
template <typename S>
SortSpace sortSpaceOf(const Geom& g) {
  SortSpace sp;
  const int64_t n = g.len;
  sp.col = up(static_cast<size_t>(n) * sizeof(int64_t));
  size_t merge = 0, scan = 0, radix = 0;
  cub::DeviceMergeSort::StableSortKeys(nullptr, merge, static_cast<int64_t*>(nullptr), n,
                                       SliceLess<S>{nullptr, g});
  cub::DeviceScan::InclusiveSum(nullptr, scan, static_cast<const int64_t*>(nullptr),
                                static_cast<int64_t*>(nullptr), n);
  cub::DeviceRadixSort::SortKeys(nullptr, radix, static_cast<const uint64_t*>(nullptr),
                                 static_cast<uint64_t*>(nullptr), n);
  sp.temp = std::max({merge, scan, radix});
  return sp;
}

// The significant bits of keys in [0, n].
int keyBits(int64_t n) {
  int b = 1;
  while (b < 63 && (int64_t{1} << b) <= n) ++b;
  return b;
}

template <typename S>
Result<Firsts> sortFirsts(const S* x, const Geom& g, int64_t* u, uint8_t* base, cudaStream_t st) {
  const int64_t n = g.len;
  const SortSpace sp = sortSpaceOf<S>(g);
  auto column = [&](int i) { return reinterpret_cast<int64_t*>(base + i * sp.col); };
  int64_t *order = column(0), *head = column(1), *run = column(2), *run_first = column(3),
          *keys_out = column(6);
  const Firsts f{column(4), column(5)};
  void* temp = base + SortSpace::kColumns * sp.col;
  size_t temp_bytes = sp.temp;
  iotaKernel<<<blocksFor(n), kThreads, 0, st>>>(order, n);
  OPFORGE_RETURN_IF_ERROR(launched("Unique"));
  OPFORGE_RETURN_IF_ERROR(cudaStatus(
      cub::DeviceMergeSort::StableSortKeys(temp, temp_bytes, order, n, SliceLess<S>{x, g}, st),
      "Unique merge sort"));
  headKernel<S><<<blocksFor(n), kThreads, 0, st>>>(x, g, order, head);
  OPFORGE_RETURN_IF_ERROR(launched("Unique"));
  temp_bytes = sp.temp;
  OPFORGE_RETURN_IF_ERROR(
      cudaStatus(cub::DeviceScan::InclusiveSum(temp, temp_bytes, head, run, n, st), "Unique scan"));
  runFirstKernel<<<blocksFor(n), kThreads, 0, st>>>(order, head, run, n, run_first, u);
  OPFORGE_RETURN_IF_ERROR(launched("Unique"));
  firstOfKernel<<<blocksFor(n), kThreads, 0, st>>>(order, run, run_first, n, g.sorted, f.first,
                                                   f.slot);
  OPFORGE_RETURN_IF_ERROR(launched("Unique"));
  if (!g.sorted) {
    int64_t* keys = head;  // the heads are spent
    runKeysKernel<<<blocksFor(n), kThreads, 0, st>>>(run_first, u, n, keys);
    OPFORGE_RETURN_IF_ERROR(launched("Unique"));
    temp_bytes = sp.temp;
    OPFORGE_RETURN_IF_ERROR(cudaStatus(
        cub::DeviceRadixSort::SortKeys(temp, temp_bytes, reinterpret_cast<const uint64_t*>(keys),
                                       reinterpret_cast<uint64_t*>(keys_out), n, 0, keyBits(n), st),
        "Unique radix sort"));
    slotOfKernel<<<blocksFor(n), kThreads, 0, st>>>(keys_out, n, f.slot);
    OPFORGE_RETURN_IF_ERROR(launched("Unique"));
  }
  return f;
}

// Both tactics: the frame above with the pairwise (O(n^2)) or the sorting (O(n log n)) search.
template <bool kSort>
Status uniqueCuda(KernelContext& k, std::span<const Tensor> in, std::span<const Tensor> out) {
  const Geom g = geomOf(k.attrs(), in[0].desc);
  cudaStream_t st = streamOf(k);
  const int64_t n = g.len;
  auto* u = static_cast<int64_t*>(out[4].data);
  auto* counts = static_cast<unsigned long long*>(out[3].data);
  OPFORGE_RETURN_IF_ERROR(cudaStatus(
      cudaMemsetAsync(counts, 0, static_cast<size_t>(out[3].desc.dims[0]) * 8, st), "Unique"));
  if (n == 0) return cudaStatus(cudaMemsetAsync(u, 0, sizeof(int64_t), st), "Unique");
  auto* base = static_cast<uint8_t*>(k.workspace());
  return visitDevice<kNumeric | kBools>(in[0].desc.dtype, "Unique", [&](auto tag) -> Status {
    using S = typename decltype(tag)::type;
    const auto* x = static_cast<const S*>(in[0].data);
    Result<Firsts> f =
        kSort ? sortFirsts<S>(x, g, u, base, st) : pairwiseFirsts<S>(x, g, u, base, st);
    if (!f) return f.status();
    countKernel<<<blocksFor(n), kThreads, 0, st>>>(f->first, f->slot, u,
                                                   static_cast<int64_t*>(out[1].data),
                                                   static_cast<int64_t*>(out[2].data), counts, n);
    OPFORGE_RETURN_IF_ERROR(launched("Unique"));
    copyKernel<S><<<blocksFor(in[0].numel()), kThreads, 0, st>>>(x, static_cast<S*>(out[0].data),
                                                                 f->first, f->slot, u, g);
    return launched("Unique");
  });
}

bool uniqueSortApplies(const AttrMap& a, std::span<const TensorDesc> in,
                       std::span<const TensorDesc> out) {
  // The radix sort's item count is an int.
  return allLinear(in, out) && geomOf(a, in[0]).len < (int64_t{1} << 31);
}

size_t uniqueSortWorkspace(const AttrMap& a, std::span<const TensorDesc> in,
                           std::span<const TensorDesc>) {
  const Geom g = geomOf(a, in[0]);
  size_t bytes = 0;
  const Status s = visitDevice<kNumeric | kBools>(in[0].dtype, "Unique", [&](auto tag) -> Status {
    bytes = sortSpaceOf<typename decltype(tag)::type>(g).total();
    return Status::ok();
  });
  return s.isOk() ? bytes : 0;
}
}  // namespace

OPFORGE_TACTICS("ai.onnx::Unique", [](OpDef& d) {
  d.tactic(1, "cuda.pairwise", uniqueCuda<false>, uniqueApplies, uniqueWorkspace);
  d.tactic(2, "cuda.sort", uniqueCuda<true>, uniqueSortApplies, uniqueSortWorkspace);
});

}  // namespace opforge::ops
