// CUDA tactic of ai.onnx::GatherElements: one thread per output element, the index replacing the
// coordinate on `axis`. An index outside [-n, n) is a run-time error (opforge/device_error.h); the
// element is written as zero.
#include "../common/index_cuda.cuh"

namespace opforge::ops {
namespace {
template <typename S>
__global__ void __launch_bounds__(kThreads)
    gatherElementsKernel(const S* __restrict__ x, const void* __restrict__ idx, bool i64,
                         S* __restrict__ y, StridedShape<1> s, int64_t total, int64_t n,
                         int64_t axis_stride, int axis, DeviceErrorRecord* rec) {
  const int64_t stride = int64_t(gridDim.x) * blockDim.x;
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < total; i += stride) {
    int64_t off[1];
    offsetsOf<1, int64_t>(s, i, off);
    const int64_t given = loadIndex(idx, i64, i);
    int64_t v = given;
    if (!normIndexDev(v, n)) {
      reportDeviceError(rec, kDeviceErrorIndex, 1, given, i, n, axis);
      y[i] = S{};
      continue;
    }
    y[i] = x[off[0] + v * axis_stride];
  }
}

Status gatherElementsCuda(KernelContext& k, std::span<const Tensor> in,
                          std::span<const Tensor> out) {
  const Tensor &x = in[0], &idx = in[1], &y = out[0];
  const int r = x.desc.rank();
  const int axis = wrapAxis(k.attr<int64_t>("axis"), r);
  for (int a = 0; a < r; ++a)
    if (a != axis && idx.desc.dims[a] > x.desc.dims[a])
      return Status::outOfRange("input 'indices' " + dimsToString(idx.desc.dims) +
                                " is larger than data " + dimsToString(x.desc.dims) + " on axis " +
                                std::to_string(a));
  if (y.numel() == 0) return Status::ok();
  auto st = stridesOf(x.desc.dims);
  const int64_t axis_stride = st[axis];
  st[axis] = 0;
  StridedShape<1> s;
  if (!coalesce<1>(idx.desc.dims, {st}, &s))
    return Status::unsupported("GatherElements (CUDA): more than " + std::to_string(kMaxDims) +
                               " axes");
  if (s.rank == 0) s.rank = 1, s.dims[0] = 1, s.strides[0][0] = 0;
  DeviceErrorRecord* rec = k.errorRecord();
  return visitDeviceBySize(x.desc.dtype, "GatherElements", [&](auto tag) -> Status {
    using S = typename decltype(tag)::type;
    gatherElementsKernel<S><<<blocksFor(y.numel()), kThreads, 0, streamOf(k)>>>(
        static_cast<const S*>(x.data), idx.data, idx.desc.dtype == DataType::kInt64,
        static_cast<S*>(y.data), s, y.numel(), x.desc.dims[axis], axis_stride, axis, rec);
    return launched("GatherElements");
  });
}
}  // namespace

OPFORGE_TACTICS("ai.onnx::GatherElements",
                [](OpDef& d) { d.tactic(1, "cuda.elements", gatherElementsCuda, linearOnly); });

}  // namespace opforge::ops
