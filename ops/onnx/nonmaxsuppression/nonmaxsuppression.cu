// CUDA tactic of ai.onnx::NonMaxSuppression, cuda.greedy:
//   1. the scores are copied with NaN made -inf and -0 made +0 (the reference's order), each
//      (batch, class) line sorted descending with cub::DeviceSegmentedRadixSort (stable: equal
//      scores keep the lower box index first);
//   2. a block per line walks the sorted boxes: the first box not yet suppressed is taken, and the
//      block marks every later box whose IoU with it is above the threshold, until
//      max_output_boxes_per_class boxes are taken or none is left. A box is taken exactly when no
//      box taken before it suppresses it: the reference's greedy order. The IoU is computed with
//      FP32 operations rounded one by one (no FMA contraction), as the reference computes it;
//   3. one block scans the per-line counts into row offsets and writes K into the size tensor; a
//      block per line writes its rows (batch, class, box).
// Nothing synchronizes: max_output_boxes_per_class and the thresholds are read on the device.
#include <thrust/iterator/counting_iterator.h>
#include <thrust/iterator/transform_iterator.h>
#include <cub/block/block_scan.cuh>
#include <cub/device/device_segmented_radix_sort.cuh>

#include "../../common/int_fit.h"
#include "../common/cuda_common.cuh"

namespace opforge::ops {
namespace {

constexpr size_t kAlign = 256;
size_t up(size_t v) {
  return (v + kAlign - 1) / kAlign * kAlign;
}

struct MulBy {
  int n;
  __host__ __device__ int operator()(int i) const { return i * n; }
};
using OffsetIt = thrust::transform_iterator<MulBy, thrust::counting_iterator<int>, int>;

struct Geom {
  int64_t batches, classes, boxes;
  __host__ __device__ int64_t lines() const { return batches * classes; }
  __host__ __device__ int64_t total() const { return batches * classes * boxes; }
};

Geom geomOf(std::span<const TensorDesc> in) {
  return Geom{in[0].dims[0], in[1].dims[1], in[0].dims[1]};
}

size_t sortTemp(const Geom& g) {
  size_t bytes = 0;
  OffsetIt b(thrust::counting_iterator<int>(0), MulBy{static_cast<int>(g.boxes)});
  cub::DeviceSegmentedRadixSort::SortPairsDescending(
      nullptr, bytes, static_cast<const float*>(nullptr), static_cast<float*>(nullptr),
      static_cast<const int*>(nullptr), static_cast<int*>(nullptr), static_cast<int>(g.total()),
      static_cast<int>(g.lines()), b, b + 1);
  return bytes;
}

// Workspace: keys in, keys out, box indices in, out, suppressed flags, taken boxes (all
// [lines, boxes]), counts [lines], row offsets [lines], sort temp.
struct Layout {
  size_t keys_in, keys_out, idx_in, idx_out, flags, taken, counts, offsets, temp, temp_bytes, end;
};
Layout layoutOf(const Geom& g) {
  const size_t t = static_cast<size_t>(g.total()), l = static_cast<size_t>(g.lines());
  Layout w{};
  size_t at = 0;
  auto take = [&](size_t bytes) {
    const size_t here = at;
    at += up(bytes);
    return here;
  };
  w.keys_in = take(t * sizeof(float));
  w.keys_out = take(t * sizeof(float));
  w.idx_in = take(t * sizeof(int));
  w.idx_out = take(t * sizeof(int));
  w.flags = take(t);
  w.taken = take(t * sizeof(int));
  w.counts = take(l * sizeof(int));
  w.offsets = take(l * sizeof(int64_t));
  w.temp_bytes = sortTemp(g);
  w.temp = take(w.temp_bytes);
  w.end = at;
  return w;
}

__global__ void prepKernel(const float* __restrict__ scores, float* __restrict__ keys,
                           int* __restrict__ idx, int64_t total, int64_t n) {
  const int64_t stride = int64_t(gridDim.x) * blockDim.x;
  for (int64_t t = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; t < total; t += stride) {
    const float s = scores[t];
    keys[t] = isnan(s) ? __int_as_float(0xff800000) : (s == 0.f ? 0.f : s);  // -inf
    idx[t] = static_cast<int>(t % n);
  }
}

struct Extent {
  float x0, x1, y0, y1;
};
// std::min / std::max exactly (NaN operands as the reference's std::min/max treat them).
__device__ __forceinline__ float minOf(float a, float b) {
  return b < a ? b : a;
}
__device__ __forceinline__ float maxOf(float a, float b) {
  return a < b ? b : a;
}
__device__ __forceinline__ Extent extentOf(const float* b, bool center) {
  if (center) {
    const float hw = __fdiv_rn(b[2], 2.f), hh = __fdiv_rn(b[3], 2.f);
    return {__fsub_rn(b[0], hw), __fadd_rn(b[0], hw), __fsub_rn(b[1], hh), __fadd_rn(b[1], hh)};
  }
  return {minOf(b[1], b[3]), maxOf(b[1], b[3]), minOf(b[0], b[2]), maxOf(b[0], b[2])};
}
// IoU(a, s) > threshold, each FP32 operation rounded on its own (as the reference).
__device__ __forceinline__ bool suppresses(const Extent& a, const Extent& s, float threshold) {
  const float ix0 = maxOf(a.x0, s.x0), ix1 = minOf(a.x1, s.x1);
  if (ix1 <= ix0) return false;
  const float iy0 = maxOf(a.y0, s.y0), iy1 = minOf(a.y1, s.y1);
  if (iy1 <= iy0) return false;
  const float inter = __fmul_rn(__fsub_rn(ix1, ix0), __fsub_rn(iy1, iy0));
  const float area_a = __fmul_rn(__fsub_rn(a.x1, a.x0), __fsub_rn(a.y1, a.y0));
  const float area_s = __fmul_rn(__fsub_rn(s.x1, s.x0), __fsub_rn(s.y1, s.y0));
  const float uni = __fsub_rn(__fadd_rn(area_a, area_s), inter);
  if (inter <= 0.f || area_a <= 0.f || area_s <= 0.f || uni <= 0.f) return false;
  return __fdiv_rn(inter, uni) > threshold;
}

struct Params {
  const float* boxes;
  const float* keys;       // sorted scores
  const int* idx;          // their box indices
  uint8_t* flags;          // 1: filtered or suppressed
  int* taken;              // the taken boxes of each line, in order
  int* counts;             // how many each line took
  const int64_t* max_out;  // nullptr: absent (selects nothing)
  const float* iou;        // nullptr: 0
  const float* score;      // nullptr: no filter
  Geom g;
  bool center;
};

__global__ void __launch_bounds__(kThreads) selectKernel(Params p) {
  __shared__ int next;
  const int n = static_cast<int>(p.g.boxes);
  const int64_t max_out = p.max_out && *p.max_out > 0 ? *p.max_out : 0;
  const float iou = p.iou ? *p.iou : 0.f;
  for (int64_t line = blockIdx.x; line < p.g.lines(); line += gridDim.x) {
    const int64_t b = line / p.g.classes;
    const float* keys = p.keys + line * n;
    const int* idx = p.idx + line * n;
    uint8_t* flags = p.flags + line * n;
    int* taken = p.taken + line * n;
    const float* boxes = p.boxes + b * n * 4;
    const float thr = p.score ? *p.score : 0.f;
    for (int j = threadIdx.x; j < n; j += blockDim.x)
      flags[j] = p.score && !(keys[j] > thr) ? 1 : 0;
    int count = 0, from = 0;
    while (count < max_out) {
      __syncthreads();  // the flags of the last pass are written, its reads of `next` done
      if (threadIdx.x == 0) next = n;
      __syncthreads();
      for (int base = from; base < n; base += blockDim.x) {
        const int j = base + static_cast<int>(threadIdx.x);
        const bool open = j < n && flags[j] == 0;
        if (__syncthreads_or(open)) {
          if (open) atomicMin(&next, j);
          break;
        }
      }
      __syncthreads();
      const int q = next;
      if (q >= n) break;
      const Extent s = extentOf(boxes + 4 * idx[q], p.center);
      if (threadIdx.x == 0) taken[count] = idx[q];
      ++count;
      for (int j = q + 1 + static_cast<int>(threadIdx.x); j < n; j += blockDim.x)
        if (flags[j] == 0 && suppresses(extentOf(boxes + 4 * idx[j], p.center), s, iou))
          flags[j] = 1;
      from = q + 1;
    }
    if (threadIdx.x == 0) p.counts[line] = count;
    __syncthreads();  // `next` and the flags are reused by the next line
  }
}

// One block: offsets[l] = sum of counts[0, l); the size tensor gets the total.
__global__ void __launch_bounds__(kThreads)
    scanKernel(const int* __restrict__ counts, int64_t* __restrict__ offsets, int64_t lines,
               int64_t* __restrict__ total, int64_t capacity, DeviceErrorRecord* rec) {
  using Scan = cub::BlockScan<int64_t, kThreads>;
  __shared__ typename Scan::TempStorage tmp;
  int64_t carry = 0;
  for (int64_t base = 0; base < lines; base += kThreads) {
    const int64_t l = base + threadIdx.x;
    const int64_t v = l < lines ? counts[l] : 0;
    int64_t ex, sum;
    Scan(tmp).ExclusiveSum(v, ex, sum);
    if (l < lines) offsets[l] = carry + ex;
    carry += sum;
    __syncthreads();
  }
  if (threadIdx.x == 0) {
    if (carry > capacity) {
      reportDeviceError(rec, kDeviceErrorSize, 2, carry, 0, capacity, 0);
      carry = capacity;
    }
    *total = carry;
  }
}

__global__ void writeKernel(const int* __restrict__ taken, const int* __restrict__ counts,
                            const int64_t* __restrict__ offsets, int64_t* __restrict__ y, Geom g,
                            int64_t capacity) {
  for (int64_t line = blockIdx.x; line < g.lines(); line += gridDim.x) {
    const int64_t b = line / g.classes, c = line - b * g.classes, off = offsets[line];
    for (int t = threadIdx.x; t < counts[line] && off + t < capacity; t += blockDim.x) {
      int64_t* row = y + 3 * (off + t);
      row[0] = b;
      row[1] = c;
      row[2] = taken[line * g.boxes + t];
    }
  }
}

const void* scalarOf(std::span<const Tensor> in, size_t i) {
  return present(in, i) && in[i].numel() > 0 ? in[i].data : nullptr;
}

Status nmsCuda(KernelContext& k, std::span<const Tensor> in, std::span<const Tensor> out) {
  const TensorDesc descs[2] = {in[0].desc, in[1].desc};
  const Geom g = geomOf(descs);
  cudaStream_t st = streamOf(k);
  auto* total = static_cast<int64_t*>(out[1].data);
  if (g.total() == 0) return cudaStatus(cudaMemsetAsync(total, 0, sizeof(int64_t), st), "NMS");
  const Layout w = layoutOf(g);
  auto* base = static_cast<uint8_t*>(k.workspace());
  auto at = [&](size_t off) { return static_cast<void*>(base + off); };
  auto* keys_in = static_cast<float*>(at(w.keys_in));
  auto* keys_out = static_cast<float*>(at(w.keys_out));
  auto* idx_in = static_cast<int*>(at(w.idx_in));
  auto* idx_out = static_cast<int*>(at(w.idx_out));
  prepKernel<<<blocksFor(g.total()), kThreads, 0, st>>>(static_cast<const float*>(in[1].data),
                                                        keys_in, idx_in, g.total(), g.boxes);
  OPFORGE_RETURN_IF_ERROR(launched("NonMaxSuppression"));
  size_t temp_bytes = w.temp_bytes;
  OffsetIt segs(thrust::counting_iterator<int>(0), MulBy{static_cast<int>(g.boxes)});
  OPFORGE_RETURN_IF_ERROR(cudaStatus(
      cub::DeviceSegmentedRadixSort::SortPairsDescending(
          at(w.temp), temp_bytes, keys_in, keys_out, idx_in, idx_out, static_cast<int>(g.total()),
          static_cast<int>(g.lines()), segs, segs + 1, 0, int(sizeof(float) * 8), st),
      "NonMaxSuppression sort"));
  Params p{};
  p.boxes = static_cast<const float*>(in[0].data);
  p.keys = keys_out;
  p.idx = idx_out;
  p.flags = static_cast<uint8_t*>(at(w.flags));
  p.taken = static_cast<int*>(at(w.taken));
  p.counts = static_cast<int*>(at(w.counts));
  p.max_out = static_cast<const int64_t*>(scalarOf(in, 2));
  p.iou = static_cast<const float*>(scalarOf(in, 3));
  p.score = static_cast<const float*>(scalarOf(in, 4));
  p.g = g;
  p.center = k.attr<int64_t>("center_point_box") == 1;
  const unsigned lines = static_cast<unsigned>(std::min<int64_t>(g.lines(), 132 * 16));
  selectKernel<<<lines, kThreads, 0, st>>>(p);
  OPFORGE_RETURN_IF_ERROR(launched("NonMaxSuppression"));
  auto* offsets = static_cast<int64_t*>(at(w.offsets));
  const int64_t capacity = out[0].desc.dims[0];
  scanKernel<<<1, kThreads, 0, st>>>(p.counts, offsets, g.lines(), total, capacity,
                                     k.errorRecord());
  OPFORGE_RETURN_IF_ERROR(launched("NonMaxSuppression"));
  writeKernel<<<lines, 128, 0, st>>>(p.taken, p.counts, offsets, static_cast<int64_t*>(out[0].data),
                                     g, capacity);
  return launched("NonMaxSuppression");
}

bool nmsApplies(const AttrMap&, std::span<const TensorDesc> in, std::span<const TensorDesc> out) {
  // Box offsets are 4 * index in int, and a line's loops step an int past its box count.
  const Geom g = geomOf(in);
  return allLinear(in, out) && ops::productBelow({g.batches, g.classes, g.boxes}, ops::kI32Limit) &&
         g.boxes < (int64_t{1} << 29);
}

size_t nmsWorkspace(const AttrMap&, std::span<const TensorDesc> in, std::span<const TensorDesc>) {
  const Geom g = geomOf(in);
  return g.total() == 0 ? 0 : layoutOf(g).end;
}
}  // namespace

OPFORGE_TACTICS("ai.onnx::NonMaxSuppression",
                [](OpDef& d) { d.tactic(1, "cuda.greedy", nmsCuda, nmsApplies, nmsWorkspace); });

}  // namespace opforge::ops
