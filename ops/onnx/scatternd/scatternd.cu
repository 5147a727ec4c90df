// CUDA tactics of ai.onnx::ScatterND (output = data, then slices replaced or reduced):
//   1 cuda.ordered   one thread per slice element walks the index tuples in order — exactly the
//                    reference, duplicates included;
//   2 cuda.parallel  one thread per (tuple, element); reductions use atomic read-modify-write, so
//                    float sums may round differently and duplicate indices with reduction 'none'
//                    keep an arbitrary one of their updates (ONNX leaves that undefined).
// Indices out of range are a run-time error (opforge/device_error.h): their updates are skipped.
#include "../common/index_cuda.cuh"

namespace opforge::ops {
namespace {
struct ScatterNdGeom {
  int q;
  int64_t tuples, slice;
  int64_t dims[kMaxDims], strides[kMaxDims];
};

// Offset of tuple t's slice in data, or -1 when an index is out of range (reported once).
__device__ __forceinline__ int64_t tupleOffset(const void* idx, bool i64, const ScatterNdGeom& g,
                                               int64_t t, bool report, DeviceErrorRecord* rec) {
  int64_t off = 0;
  for (int j = 0; j < g.q; ++j) {
    const int64_t pos = t * g.q + j, given = loadIndex(idx, i64, pos);
    int64_t v = given;
    if (!normIndexDev(v, g.dims[j])) {
      if (report) reportDeviceError(rec, kDeviceErrorIndex, 1, given, pos, g.dims[j], j);
      return -1;
    }
    off += v * g.strides[j];
  }
  return off;
}

template <typename S>
__global__ void scatterNdOrderedKernel(S* __restrict__ y, const void* __restrict__ idx, bool i64,
                                       const S* __restrict__ up, ScatterNdGeom g, int red,
                                       DeviceErrorRecord* rec) {
  const int64_t stride = int64_t(gridDim.x) * blockDim.x;
  for (int64_t e = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; e < g.slice; e += stride)
    for (int64_t t = 0; t < g.tuples; ++t) {
      const int64_t off = tupleOffset(idx, i64, g, t, e == 0, rec);
      if (off < 0) continue;
      y[off + e] = scatterCombine(y[off + e], up[t * g.slice + e], red);
    }
}

template <typename S>
__global__ void scatterNdParallelKernel(S* __restrict__ y, const void* __restrict__ idx, bool i64,
                                        const S* __restrict__ up, ScatterNdGeom g, int red,
                                        DeviceErrorRecord* rec) {
  const int64_t total = g.tuples * g.slice;
  const int64_t stride = int64_t(gridDim.x) * blockDim.x;
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < total; i += stride) {
    const int64_t t = i / g.slice, e = i - t * g.slice;
    const int64_t off = tupleOffset(idx, i64, g, t, e == 0, rec);
    if (off < 0) continue;
    if (red == kScatterNone)
      y[off + e] = up[i];
    else
      atomicCombine(&y[off + e], up[i], red);
  }
}

template <bool kOrdered>
Status scatterNdCuda(KernelContext& k, std::span<const Tensor> in, std::span<const Tensor> out) {
  const Tensor &x = in[0], &idx = in[1], &up = in[2], &y = out[0];
  cudaStream_t st = streamOf(k);
  OPFORGE_RETURN_IF_ERROR(copyDevice(y.data, x.data, y.bytes(), st, "ScatterND"));
  const int r = x.desc.rank();
  ScatterNdGeom g{};
  g.q = static_cast<int>(idx.desc.dims.back());
  if (g.q > kMaxDims)
    return Status::unsupported("ScatterND (CUDA): index tuples longer than " +
                               std::to_string(kMaxDims));
  g.tuples = g.q > 0 ? idx.numel() / g.q : 0;
  g.slice = prodOf(x.desc.dims, g.q, r);
  const auto xs = stridesOf(x.desc.dims);
  for (int j = 0; j < g.q; ++j) g.dims[j] = x.desc.dims[j], g.strides[j] = xs[j];
  if (g.tuples == 0 || g.slice == 0) return Status::ok();
  const int red = scatterReductionOf(k.attrs());
  DeviceErrorRecord* rec = k.errorRecord();
  const bool i64 = idx.desc.dtype == DataType::kInt64;
  return visitDevice<kAll>(x.desc.dtype, "ScatterND", [&](auto tag) -> Status {
    using S = typename decltype(tag)::type;
    if constexpr (kOrdered)
      scatterNdOrderedKernel<S><<<blocksFor(g.slice), kThreads, 0, st>>>(
          static_cast<S*>(y.data), idx.data, i64, static_cast<const S*>(up.data), g, red, rec);
    else
      scatterNdParallelKernel<S><<<blocksFor(g.tuples * g.slice), kThreads, 0, st>>>(
          static_cast<S*>(y.data), idx.data, i64, static_cast<const S*>(up.data), g, red, rec);
    return launched("ScatterND");
  });
}
}  // namespace

OPFORGE_TACTICS("ai.onnx::ScatterND", [](OpDef& d) {
  d.tactic(1, "cuda.ordered", scatterNdCuda<true>, linearOnly);
  d.tactic(2, "cuda.parallel", scatterNdCuda<false>, linearOnly);
});

}  // namespace opforge::ops
