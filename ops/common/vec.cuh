// vec.cuh — 16-byte vector access for elementwise CUDA tactics (the contrib ops, the engine's
// fused GELU): a 16-byte pack of elements (their DNum<T>::Bits, device_types.cuh), alignment
// tests and grid sizing. The contrib ops reach it as contrib::cu (ops/contrib/common/vec.cuh).
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <map>
#include <mutex>
#include <tuple>

#include "cuda_utils.cuh"
#include "device_types.cuh"

namespace opforge::cuvec {

// Sixteen bytes of elements of type T.
template <typename T>
union Pack {
  static constexpr int N = 16 / sizeof(typename ops::DNum<T>::Bits);
  uint4 u;
  typename ops::DNum<T>::Bits b[N];
};

__host__ __device__ inline bool aligned16(const void* p) {
  return (reinterpret_cast<uintptr_t>(p) & 15u) == 0;
}

// Number of leading elements (of size `es`) before `p` reaches 16-byte alignment; -1 when it never
// does (p not even element-aligned).
inline int64_t headTo16(const void* p, size_t es) {
  const uintptr_t a = reinterpret_cast<uintptr_t>(p);
  if (a % es) return -1;
  return static_cast<int64_t>(((16 - (a & 15u)) & 15u) / es);
}

inline int smCount() {
  static const int sms = [] {
    int dev = 0, n = 132;
    if (cudaGetDevice(&dev) == cudaSuccess) {
      int v = 0;
      if (cudaDeviceGetAttribute(&v, cudaDevAttrMultiProcessorCount, dev) == cudaSuccess && v > 0)
        n = v;
    }
    return n;
  }();
  return sms;
}

// Resident blocks per SM of `kernel` at `threads` threads and `smem` dynamic shared memory, asked
// once per kernel and cached.
template <typename Kernel>
int blocksPerSm(Kernel kernel, int threads, size_t smem = 0) {
  static std::mutex mu;
  static std::map<std::tuple<const void*, int, size_t>, int> cache;
  const auto key = std::make_tuple(reinterpret_cast<const void*>(kernel), threads, smem);
  std::lock_guard<std::mutex> lock(mu);
  auto it = cache.find(key);
  if (it != cache.end()) return it->second;
  int b = 0;
  if (cudaOccupancyMaxActiveBlocksPerMultiprocessor(&b, kernel, threads, smem) != cudaSuccess ||
      b < 1) {
    (void)cudaGetLastError();
    b = 1;
  }
  cache[key] = b;
  return b;
}

// Grid for a grid-stride loop over `work_items` items of one thread each: one full wave of
// resident blocks, never more blocks than the work needs.
template <typename Kernel>
unsigned gridFill(Kernel kernel, int64_t work_items, int threads, size_t smem = 0) {
  int64_t need = (work_items + threads - 1) / threads;
  const int64_t cap = static_cast<int64_t>(smCount()) * blocksPerSm(kernel, threads, smem);
  if (need < 1) need = 1;
  return static_cast<unsigned>(need < cap ? need : cap);
}

// One block per `threads` work items (no grid-stride loop runs more than once): the launch shape
// of PyTorch's elementwise kernels, timed against gridFill's one wave by the autotuner.
inline unsigned gridAll(int64_t work_items, int threads) {
  int64_t need = (work_items + threads - 1) / threads;
  if (need < 1) need = 1;
  return static_cast<unsigned>(need < 0x7fffffff ? need : 0x7fffffff);
}

}  // namespace opforge::cuvec
