// CUDA tactic of ai.onnx::Gather: y[o, j, r] = x[o, idx[j], r], the inner slice copied in the
// widest unit (up to 16 bytes) its size and the pointers allow. An index outside [-n, n) is a
// run-time error (opforge/device_error.h): its slice is written as zeros, nothing is read out of
// bounds.
#include "../common/index_cuda.cuh"
#include "../common/kernel_axis.h"

namespace opforge::ops {
namespace {
template <typename U>
__global__ void __launch_bounds__(kThreads)
    gatherKernel(const U* __restrict__ x, const void* __restrict__ idx, bool i64, U* __restrict__ y,
                 int64_t outer, int64_t n, int64_t ni, int64_t inner, int axis,
                 DeviceErrorRecord* rec) {
  const int64_t total = outer * ni * inner;
  const int64_t stride = int64_t(gridDim.x) * blockDim.x;
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < total; i += stride) {
    const int64_t t = i / inner, r = i - t * inner;
    const int64_t o = t / ni, j = t - o * ni;
    const int64_t given = loadIndex(idx, i64, j);
    int64_t v = given;
    if (!normIndexDev(v, n)) {
      if (r == 0 && o == 0) reportDeviceError(rec, kDeviceErrorIndex, 1, given, j, n, axis);
      y[i] = U{};
      continue;
    }
    y[i] = x[(o * n + v) * inner + r];
  }
}

Status gatherCuda(KernelContext& k, std::span<const Tensor> in, std::span<const Tensor> out) {
  const Tensor &x = in[0], &idx = in[1], &y = out[0];
  if (y.numel() == 0) return Status::ok();
  const int r = x.desc.rank();
  OPFORGE_ASSIGN_OR_RETURN(const int axis, kernelAxis(k.attr<int64_t>("axis"), r));  // as gather.cc
  const int64_t es = static_cast<int64_t>(dtypeSize(x.desc.dtype));
  const int64_t outer = prodOf(x.desc.dims, 0, axis), n = x.desc.dims[axis], ni = idx.numel();
  const int64_t inner_bytes = prodOf(x.desc.dims, axis + 1, r) * es;
  const size_t unit = copyUnit(inner_bytes, {x.data, y.data});
  DeviceErrorRecord* rec = k.errorRecord();
  return visitUnit(unit, [&](auto tag) -> Status {
    using U = typename decltype(tag)::type;
    const int64_t inner = inner_bytes / static_cast<int64_t>(sizeof(U));
    gatherKernel<U><<<blocksFor(outer * ni * inner), kThreads, 0, streamOf(k)>>>(
        static_cast<const U*>(x.data), idx.data, idx.desc.dtype == DataType::kInt64,
        static_cast<U*>(y.data), outer, n, ni, inner, axis, rec);
    return launched("Gather");
  });
}
}  // namespace

OPFORGE_TACTICS("ai.onnx::Gather",
                [](OpDef& d) { d.tactic(1, "cuda.rows", gatherCuda, linearOnly); });

}  // namespace opforge::ops
