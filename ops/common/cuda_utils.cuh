// cuda_utils.cuh — small helpers shared by CUDA tactics.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <string>

#include "opforge/op.h"

namespace opforge::ops {

inline Status cudaStatus(cudaError_t e, const char* what) {
  if (e == cudaSuccess) return Status::ok();
  return Status::runtime(std::string(what) + ": " + cudaGetErrorName(e) + " (" +
                         cudaGetErrorString(e) + ")");
}

// The last launch's error (launch configuration, missing kernel image, ...).
inline Status lastLaunch(const char* what) {
  return cudaStatus(cudaGetLastError(), what);
}

inline cudaStream_t streamOf(const KernelContext& ctx) {
  return static_cast<cudaStream_t>(ctx.stream());
}

// Blocks for a grid-stride loop over n items: enough to fill the GPU, never more than needed.
inline unsigned gridFor(int64_t n, int threads, int max_blocks = 132 * 32) {
  int64_t b = (n + threads - 1) / threads;
  if (b < 1) b = 1;
  return static_cast<unsigned>(b < max_blocks ? b : max_blocks);
}

inline bool allOnDevice(std::span<const Tensor> ts) {
  for (const auto& t : ts)
    if (t.data && t.device != Device::kCuda) return false;
  return true;
}

// Device-side numeric traits: load to float, store from float.
template <typename T>
struct DevNum;
template <>
struct DevNum<float> {
  __device__ static float load(float v) { return v; }
  __device__ static float store(float v) { return v; }
};
template <>
struct DevNum<__half> {
  __device__ static float load(__half v) { return __half2float(v); }
  __device__ static __half store(float v) { return __float2half_rn(v); }
};
template <>
struct DevNum<__nv_bfloat16> {
  __device__ static float load(__nv_bfloat16 v) { return __bfloat162float(v); }
  __device__ static __nv_bfloat16 store(float v) { return __float2bfloat16_rn(v); }
};

}  // namespace opforge::ops
