// CUDA tactic of ai.onnx::GatherND: one thread per output unit; each index tuple addresses a
// contiguous slice copied in the widest unit its size allows. Indices out of range are a run-time
// error (opforge/device_error.h); their slice is written as zeros.
#include "../common/index_cuda.cuh"

namespace opforge::ops {
namespace {
struct NdGeom {
  int q, b;
  int64_t tuples;             // per batch
  int64_t slice;              // units per slice
  int64_t batch_units;        // units per batch of data
  int64_t dims[kMaxDims];     // data dims b .. b + q
  int64_t strides[kMaxDims];  // their strides in units
};

template <typename U>
__global__ void __launch_bounds__(kThreads)
    gatherNdKernel(const U* __restrict__ x, const void* __restrict__ idx, bool i64,
                   U* __restrict__ y, NdGeom g, int64_t total, DeviceErrorRecord* rec) {
  const int64_t stride = int64_t(gridDim.x) * blockDim.x;
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < total; i += stride) {
    const int64_t t = i / g.slice, e = i - t * g.slice;
    const int64_t bi = t / g.tuples;
    int64_t off = bi * g.batch_units;
    bool ok = true;
    for (int j = 0; j < g.q; ++j) {
      const int64_t pos = t * g.q + j;
      const int64_t given = loadIndex(idx, i64, pos);
      int64_t v = given;
      if (!normIndexDev(v, g.dims[j])) {
        if (e == 0) reportDeviceError(rec, kDeviceErrorIndex, 1, given, pos, g.dims[j], g.b + j);
        ok = false;
      }
      off += v * g.strides[j];
    }
    y[i] = ok ? x[off + e] : U{};
  }
}

Status gatherNdCuda(KernelContext& k, std::span<const Tensor> in, std::span<const Tensor> out) {
  const Tensor &x = in[0], &idx = in[1], &y = out[0];
  if (y.numel() == 0) return Status::ok();
  const int b = static_cast<int>(k.attr<int64_t>("batch_dims"));
  const int r = x.desc.rank();
  const int q = static_cast<int>(idx.desc.dims.back());
  if (q > kMaxDims)
    return Status::unsupported("GatherND (CUDA): index tuples longer than " +
                               std::to_string(kMaxDims));
  const int64_t es = static_cast<int64_t>(dtypeSize(x.desc.dtype));
  const int64_t slice_bytes = prodOf(x.desc.dims, b + q, r) * es;
  // Tensors are aligned to their element size, so the unit is at least one element.
  const size_t unit =
      std::max<size_t>(copyUnit(slice_bytes, {x.data, y.data}), static_cast<size_t>(es));
  const auto xs = stridesOf(x.desc.dims);
  NdGeom g{};
  g.q = q;
  g.b = b;
  g.tuples = prodOf(idx.desc.dims, b, idx.desc.rank() - 1);
  const int64_t per = static_cast<int64_t>(unit) / es;  // elements per unit
  g.slice = slice_bytes / static_cast<int64_t>(unit);
  g.batch_units = prodOf(x.desc.dims, b, r) / per;
  for (int j = 0; j < q; ++j) {
    g.dims[j] = x.desc.dims[b + j];
    g.strides[j] = xs[b + j] / per;
  }
  DeviceErrorRecord* rec = k.errorRecord();
  return visitUnit(unit, [&](auto tag) -> Status {
    using U = typename decltype(tag)::type;
    const int64_t total = y.numel() / per;
    gatherNdKernel<U><<<blocksFor(total), kThreads, 0, streamOf(k)>>>(
        static_cast<const U*>(x.data), idx.data, idx.desc.dtype == DataType::kInt64,
        static_cast<U*>(y.data), g, total, rec);
    return launched("GatherND");
  });
}
}  // namespace

OPFORGE_TACTICS("ai.onnx::GatherND",
                [](OpDef& d) { d.tactic(1, "cuda.slices", gatherNdCuda, linearOnly); });

}  // namespace opforge::ops
