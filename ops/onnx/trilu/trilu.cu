// CUDA tactic of ai.onnx::Trilu: keep the upper (j - i >= k) or lower (j - i <= k) triangle of the
// last two axes, zeros elsewhere; k is read on the device from the optional input.
#include "../common/cuda_common.cuh"

namespace opforge::ops {
namespace {
template <typename U>
__global__ void triluKernel(const U* __restrict__ x, U* __restrict__ y, int64_t n, int64_t rows,
                            int64_t cols, const int64_t* __restrict__ kp, bool upper) {
  const int64_t k = kp ? *kp : 0;
  const int64_t stride = int64_t(gridDim.x) * blockDim.x;
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) {
    const int64_t c = i % cols, r = (i / cols) % rows;
    const bool keep = upper ? c - r >= k : c - r <= k;
    y[i] = keep ? x[i] : U{};
  }
}
}  // namespace

OPFORGE_TACTICS("ai.onnx::Trilu", [](OpDef& d) {
  d.tactic(
      1, "cuda.mask",
      [](KernelContext& kc, std::span<const Tensor> in, std::span<const Tensor> out) -> Status {
        const Tensor &x = in[0], &y = out[0];
        const int r = x.desc.rank();
        if (y.numel() == 0) return Status::ok();
        const int64_t* kp =
            hasIn(in, 1) && in[1].numel() >= 1 ? static_cast<const int64_t*>(in[1].data) : nullptr;
        return visitDeviceBySize(x.desc.dtype, "Trilu", [&](auto tag) -> Status {
          using U = typename decltype(tag)::type;
          triluKernel<U><<<blocksFor(y.numel()), kThreads, 0, streamOf(kc)>>>(
              static_cast<const U*>(x.data), static_cast<U*>(y.data), y.numel(), x.desc.dims[r - 2],
              x.desc.dims[r - 1], kp, kc.attr<int64_t>("upper") != 0);
          return launched("Trilu");
        });
      },
      linearOnly);
});

}  // namespace opforge::ops
