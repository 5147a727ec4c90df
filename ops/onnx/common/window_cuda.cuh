// window_cuda.cuh — the CUDA tactic of the window-function ops (window.h): a thread per element
// evaluates the formula in double, as the reference.
#pragma once

#include "cuda_common.cuh"
#include "window.h"

namespace opforge::ops {

template <typename S>
__global__ void windowKernel(S* __restrict__ y, WindowCoeffs c, int64_t size, bool periodic) {
  const int64_t stride = int64_t(gridDim.x) * blockDim.x;
  for (int64_t n = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; n < size; n += stride) {
    double v = windowValue(c, n, size, periodic);
    using C = typename DNum<S>::C;
    if constexpr (std::is_integral_v<C>) v = isnan(v) ? 0 : trunc(v);
    y[n] = DNum<S>::store(static_cast<C>(v));
  }
}

inline KernelFn windowCuda(WindowCoeffs c, const char* op) {
  return [c, op](KernelContext& k, std::span<const Tensor>, std::span<const Tensor> out) -> Status {
    const int64_t size = out[0].desc.dims[0];
    if (size == 0) return Status::ok();
    const bool periodic = k.attr<int64_t>("periodic") != 0;
    return visitDevice<kWindowTypes>(out[0].desc.dtype, op, [&](auto tag) -> Status {
      using S = typename decltype(tag)::type;
      windowKernel<S><<<blocksFor(size), kThreads, 0, streamOf(k)>>>(static_cast<S*>(out[0].data),
                                                                     c, size, periodic);
      return launched(op);
    });
  };
}

}  // namespace opforge::ops
