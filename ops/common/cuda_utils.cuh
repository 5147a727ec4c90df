// cuda_utils.cuh — small helpers shared by CUDA tactics.
#pragma once

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

// Copies bytes device to device (nothing for 0 bytes or the same buffer: a view tactic in its
// input's storage).
inline Status copyDevice(void* dst, const void* src, size_t bytes, cudaStream_t st,
                         const char* what) {
  if (bytes == 0 || dst == src) return Status::ok();
  return cudaStatus(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice, st), what);
}

// Blocks for a grid-stride loop over n items: enough to fill the GPU, never more than needed.
inline unsigned gridFor(int64_t n, int threads, int max_blocks = 132 * 32) {
  int64_t b = (n + threads - 1) / threads;
  if (b < 1) b = 1;
  return static_cast<unsigned>(b < max_blocks ? b : max_blocks);
}

}  // namespace opforge::ops
