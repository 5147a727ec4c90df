// CUDA tactics of ai.onnx::ScatterElements (output = data, then updates scattered along `axis`):
//   1 cuda.ordered   one thread per line along the axis walks it in order — exactly the reference,
//                    duplicate indices included (they can only collide within a line);
//   2 cuda.parallel  one thread per update; reductions use atomic read-modify-write (float sums
//                    may round differently; duplicates with 'none' keep an arbitrary update).
// Indices out of range are a run-time error (opforge/device_error.h): their updates are skipped.
#include "../common/index_cuda.cuh"

namespace opforge::ops {
namespace {
struct ScatterElemGeom {
  int rank, axis;
  int64_t idims[kMaxDims];  // indices/updates dims
  int64_t xs[kMaxDims];     // data strides
  int64_t n;                // data's size on the axis
};

// Data offset of indices position (coordinates from flat p) with the axis coordinate left out.
__device__ __forceinline__ int64_t baseOffset(const ScatterElemGeom& g, int64_t p) {
  int64_t off = 0;
  for (int a = g.rank - 1; a >= 0; --a) {
    const int64_t q = p / g.idims[a], c = p - q * g.idims[a];
    if (a != g.axis) off += c * g.xs[a];
    p = q;
  }
  return off;
}

template <typename S>
__global__ void scatterElemOrderedKernel(S* __restrict__ y, const void* __restrict__ idx, bool i64,
                                         const S* __restrict__ up, ScatterElemGeom g, int64_t lines,
                                         int64_t inner, int red, DeviceErrorRecord* rec) {
  const int64_t len = g.idims[g.axis];
  const int64_t stride = int64_t(gridDim.x) * blockDim.x;
  for (int64_t l = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; l < lines; l += stride) {
    const int64_t o = l / inner, r = l - o * inner;
    const int64_t first = o * len * inner + r;
    const int64_t base = baseOffset(g, first);
    for (int64_t j = 0; j < len; ++j) {
      const int64_t p = first + j * inner, given = loadIndex(idx, i64, p);
      int64_t v = given;
      if (!normIndexDev(v, g.n)) {
        reportDeviceError(rec, kDeviceErrorIndex, 1, given, p, g.n, g.axis);
        continue;
      }
      S* dst = y + base + v * g.xs[g.axis];
      *dst = scatterCombine(*dst, up[p], red);
    }
  }
}

template <typename S>
__global__ void scatterElemParallelKernel(S* __restrict__ y, const void* __restrict__ idx, bool i64,
                                          const S* __restrict__ up, ScatterElemGeom g,
                                          int64_t total, int red, DeviceErrorRecord* rec) {
  const int64_t stride = int64_t(gridDim.x) * blockDim.x;
  for (int64_t p = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; p < total; p += stride) {
    const int64_t given = loadIndex(idx, i64, p);
    int64_t v = given;
    if (!normIndexDev(v, g.n)) {
      reportDeviceError(rec, kDeviceErrorIndex, 1, given, p, g.n, g.axis);
      continue;
    }
    S* dst = y + baseOffset(g, p) + v * g.xs[g.axis];
    if (red == kScatterNone)
      *dst = up[p];
    else
      atomicCombine(dst, up[p], red);
  }
}

template <bool kOrdered>
Status scatterElementsCuda(KernelContext& k, std::span<const Tensor> in,
                           std::span<const Tensor> out) {
  const Tensor &x = in[0], &idx = in[1], &up = in[2], &y = out[0];
  const int r = x.desc.rank();
  if (r > kMaxDims)
    return Status::unsupported("ScatterElements (CUDA): rank above " + std::to_string(kMaxDims));
  ScatterElemGeom g{};
  g.rank = r;
  g.axis = wrapAxis(k.attr<int64_t>("axis"), r);
  for (int a = 0; a < r; ++a)
    if (a != g.axis && idx.desc.dims[a] > x.desc.dims[a])
      return Status::outOfRange("input 'indices' " + dimsToString(idx.desc.dims) +
                                " is larger than data " + dimsToString(x.desc.dims) + " on axis " +
                                std::to_string(a));
  cudaStream_t st = streamOf(k);
  OPFORGE_RETURN_IF_ERROR(copyDevice(y.data, x.data, y.bytes(), st, "ScatterElements"));
  const int64_t total = idx.numel();
  if (total == 0) return Status::ok();
  const auto xs = stridesOf(x.desc.dims);
  for (int a = 0; a < r; ++a) g.idims[a] = idx.desc.dims[a], g.xs[a] = xs[a];
  g.n = x.desc.dims[g.axis];
  const int red = scatterReductionOf(k.attrs());
  DeviceErrorRecord* rec = k.errorRecord();
  const bool i64 = idx.desc.dtype == DataType::kInt64;
  return visitDevice<kAll>(x.desc.dtype, "ScatterElements", [&](auto tag) -> Status {
    using S = typename decltype(tag)::type;
    if constexpr (kOrdered) {
      const int64_t inner = prodOf(idx.desc.dims, g.axis + 1, r),
                    lines = total / idx.desc.dims[g.axis];
      scatterElemOrderedKernel<S><<<blocksFor(lines), kThreads, 0, st>>>(
          static_cast<S*>(y.data), idx.data, i64, static_cast<const S*>(up.data), g, lines, inner,
          red, rec);
    } else {
      scatterElemParallelKernel<S><<<blocksFor(total), kThreads, 0, st>>>(
          static_cast<S*>(y.data), idx.data, i64, static_cast<const S*>(up.data), g, total, red,
          rec);
    }
    return launched("ScatterElements");
  });
}
}  // namespace

OPFORGE_TACTICS("ai.onnx::ScatterElements", [](OpDef& d) {
  d.tactic(1, "cuda.ordered", scatterElementsCuda<true>, linearOnly);
  d.tactic(2, "cuda.parallel", scatterElementsCuda<false>, linearOnly);
});

}  // namespace opforge::ops
