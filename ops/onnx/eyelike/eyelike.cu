// CUDA tactic of ai.onnx::EyeLike: ones on diagonal k, zeros elsewhere, in the output's type.
#include "../common/movement.cuh"

namespace opforge::ops {
namespace {
template <typename U>
__global__ void eyeKernel(U* __restrict__ y, int64_t rows, int64_t cols, int64_t k, U one) {
  const int64_t n = rows * cols, stride = int64_t(gridDim.x) * blockDim.x;
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) {
    const int64_t r = i / cols, c = i - r * cols;
    y[i] = c - r == k ? one : U{};
  }
}

Status eyeCuda(KernelContext& kc, std::span<const Tensor>, std::span<const Tensor> out) {
  const Tensor& y = out[0];
  const int64_t rows = y.desc.dims[0], cols = y.desc.dims[1], k = kc.attr<int64_t>("k");
  if (y.numel() == 0) return Status::ok();
  uint8_t one[8] = {0};
  storeFromDouble(one, y.desc.dtype, 0, 1.0);
  return visitDeviceBySize(y.desc.dtype, "EyeLike", [&](auto tag) -> Status {
    using U = typename decltype(tag)::type;
    U v;
    std::memcpy(&v, one, sizeof(U));
    eyeKernel<U><<<blocksFor(y.numel()), kThreads, 0, streamOf(kc)>>>(static_cast<U*>(y.data), rows,
                                                                      cols, k, v);
    return launched("EyeLike");
  });
}
}  // namespace

OPFORGE_TACTICS("ai.onnx::EyeLike", [](OpDef& d) { d.tactic(1, "cuda.fill", eyeCuda); });

}  // namespace opforge::ops
