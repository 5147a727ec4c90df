// CUDA tactic of ai.onnx::SwiGLU, cuda.direct: a thread per element, in double (swiglu.h).
#include "swiglu.h"

#include "../common/cuda_common.cuh"

namespace opforge::ops {
namespace {

template <typename S>
__global__ void swigluKernel(const S* __restrict__ a, const S* __restrict__ b, S* __restrict__ y,
                             double alpha, int64_t n) {
  const int64_t stride = int64_t(gridDim.x) * blockDim.x;
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride)
    y[i] = DNum<S>::store(
        static_cast<typename DNum<S>::C>(swiglu(DNum<S>::load(a[i]), DNum<S>::load(b[i]), alpha)));
}

Status swigluCuda(KernelContext& k, std::span<const Tensor> in, std::span<const Tensor> out) {
  const int64_t n = in[0].numel();
  if (n == 0) return Status::ok();
  return visitDevice<kFloats>(in[0].desc.dtype, "SwiGLU", [&](auto tag) -> Status {
    using S = typename decltype(tag)::type;
    swigluKernel<S><<<blocksFor(n), kThreads, 0, streamOf(k)>>>(
        static_cast<const S*>(in[0].data), static_cast<const S*>(in[1].data),
        static_cast<S*>(out[0].data), k.attr<double>("alpha"), n);
    return launched("SwiGLU");
  });
}
}  // namespace

OPFORGE_TACTICS("ai.onnx::SwiGLU",
                [](OpDef& d) { d.tactic(1, "cuda.direct", swigluCuda, linearOnly); });

}  // namespace opforge::ops
