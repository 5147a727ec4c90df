// CUDA tactic of ext::silu_mul: one thread per element (grid-stride), math in float.
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <string>

#include "opforge/op.h"
#include "silu_mul.h"

namespace ext {
namespace {
using namespace opforge;

template <typename T>
__device__ float load(T v) {
  return static_cast<float>(v);
}
template <typename T>
__device__ T store(float v) {
  return static_cast<T>(v);
}

template <typename T>
__global__ void siluMulKernel(const T* __restrict__ a, const T* __restrict__ b, T* __restrict__ y,
                              int64_t n) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n;
       i += int64_t(gridDim.x) * blockDim.x)
    y[i] = store<T>(siluMul(load(a[i]), load(b[i])));
}

template <typename T>
Status launch(KernelContext& ctx, std::span<const Tensor> in, std::span<const Tensor> out) {
  const int64_t n = out[0].numel();
  if (n == 0) return Status::ok();
  constexpr int kThreads = 256;
  const int64_t blocks = (n + kThreads - 1) / kThreads;
  siluMulKernel<T><<<static_cast<unsigned>(blocks < 4096 ? blocks : 4096), kThreads, 0,
                     static_cast<cudaStream_t>(ctx.stream())>>>(static_cast<const T*>(in[0].data),
                                                                static_cast<const T*>(in[1].data),
                                                                static_cast<T*>(out[0].data), n);
  const cudaError_t e = cudaGetLastError();
  if (e == cudaSuccess) return Status::ok();
  return Status::runtime(std::string("ext::silu_mul cuda.generic: ") + cudaGetErrorString(e));
}

Status siluMulCuda(KernelContext& ctx, std::span<const Tensor> in, std::span<const Tensor> out) {
  switch (in[0].desc.dtype) {
    case DataType::kFloat32:
      return launch<float>(ctx, in, out);
    case DataType::kFloat16:
      return launch<__half>(ctx, in, out);
    case DataType::kBFloat16:
      return launch<__nv_bfloat16>(ctx, in, out);
    default:
      return Status::unsupported("ext::silu_mul cuda.generic: unsupported type");
  }
}
}  // namespace

OPFORGE_TACTICS("ext::silu_mul", [](OpDef& d) { d.tactic(1, "cuda.generic", siluMulCuda); });

}  // namespace ext
