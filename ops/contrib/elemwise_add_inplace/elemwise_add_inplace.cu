// CUDA tactic of sample::elemwise_add_plugin_: in place, 16-byte (float4) or 4-byte (half2)
// vector accesses when the base pointer is 16-byte aligned (engines align tensors to 256), else
// a scalar loop.
#include "../../common/cuda_utils.cuh"

namespace opforge::contrib {

namespace {
__global__ void addInplaceF32(float* __restrict__ p, int64_t n, float delta) {
  const int64_t n4 = n / 4;
  auto* p4 = reinterpret_cast<float4*>(p);
  const int64_t stride = int64_t(gridDim.x) * blockDim.x;
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n4; i += stride) {
    float4 v = p4[i];
    v.x += delta;
    v.y += delta;
    v.z += delta;
    v.w += delta;
    p4[i] = v;
  }
  for (int64_t i = n4 * 4 + blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n; i += stride) p[i] += delta;
}

__global__ void addInplaceF16(__half* __restrict__ p, int64_t n, float delta) {
  const int64_t n2 = n / 2;
  auto* p2 = reinterpret_cast<__half2*>(p);
  const __half2 d2 = __float2half2_rn(delta);
  const int64_t stride = int64_t(gridDim.x) * blockDim.x;
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n2; i += stride) p2[i] = __hadd2(p2[i], d2);
  if (n % 2 && blockIdx.x == 0 && threadIdx.x == 0) p[n - 1] = __float2half_rn(__half2float(p[n - 1]) + delta);
}

template <typename T>
__global__ void addInplaceScalar(T* __restrict__ p, int64_t n, float delta) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x)
    p[i] = ops::DevNum<T>::store(ops::DevNum<T>::load(p[i]) + delta);
}

Status addInplace(KernelContext& ctx, std::span<const Tensor> in, std::span<const Tensor> out) {
  const Tensor& y = out[0];
  cudaStream_t s = ops::streamOf(ctx);
  if (in[0].data != y.data && y.bytes())
    OPFORGE_RETURN_IF_ERROR(ops::cudaStatus(cudaMemcpyAsync(y.data, in[0].data, y.bytes(), cudaMemcpyDeviceToDevice, s), "elemwise_add copy"));
  const int64_t n = y.numel();
  if (n == 0) return Status::ok();
  const float delta = static_cast<float>(ctx.attr<int64_t>("delta"));
  const bool aligned = reinterpret_cast<uintptr_t>(y.data) % 16 == 0;
  if (!aligned) {
    if (y.desc.dtype == DataType::kFloat32)
      addInplaceScalar<float><<<ops::gridFor(n, 256), 256, 0, s>>>(static_cast<float*>(y.data), n, delta);
    else
      addInplaceScalar<__half><<<ops::gridFor(n, 256), 256, 0, s>>>(static_cast<__half*>(y.data), n, delta);
  } else if (y.desc.dtype == DataType::kFloat32) {
    addInplaceF32<<<ops::gridFor(n / 4 + 1, 256), 256, 0, s>>>(static_cast<float*>(y.data), n, delta);
  } else {
    addInplaceF16<<<ops::gridFor(n / 2 + 1, 256), 256, 0, s>>>(static_cast<__half*>(y.data), n, delta);
  }
  return ops::lastLaunch("elemwise_add_plugin_ cuda.vec");
}
}  // namespace

OPFORGE_TACTICS("sample::elemwise_add_plugin_", [](OpDef& d) { d.tactic(1, "cuda.vec", addInplace); });

}  // namespace opforge::contrib
