// cuda_common.cuh — what every CUDA tactic of the built-in ONNX ops shares: the device storage
// types and dtype switch of ops/common/device_types.cuh, shape helpers, launch helpers and the
// device-side index helpers of run-time error reports (opforge/device_error.h).
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <limits>
#include <string>
#include <type_traits>
#include <vector>

#include "../../common/cuda_utils.cuh"
#include "../../common/device_types.cuh"
#include "opforge/device_error.h"
#include "util.h"

namespace opforge::ops {

// Whether every tensor of a dtype list is one the CUDA side stores (all known types are).
inline bool allKnown(std::span<const TensorDesc> ds) {
  for (const auto& d : ds)
    if (d.dtype != DataType::kUndefined && dtypeSize(d.dtype) == 0) return false;
  return true;
}

// ---------------------------------------------------------------------------------------------
// Shapes passed to kernels by value
// ---------------------------------------------------------------------------------------------

constexpr int kMaxDims = 10;

// Up to kMaxDims sizes and, per operand, strides (elements).
template <int N>
struct StridedShape {
  int rank = 0;
  int64_t dims[kMaxDims];
  int64_t strides[N][kMaxDims];
};

// Row-major strides.
inline std::vector<int64_t> rowStrides(const std::vector<int64_t>& d) {
  return stridesOf(d);
}

// Coalesces axes that are contiguous for the output and every operand (drops size-1 axes).
// Inputs: out dims and one stride vector per operand (all of out's rank). Returns false when the
// result has more than kMaxDims axes.
template <int N>
bool coalesce(const std::vector<int64_t>& out, const std::vector<std::vector<int64_t>>& st,
              StridedShape<N>* s) {
  std::vector<int64_t> dims;
  std::vector<std::vector<int64_t>> str(N);
  for (size_t a = 0; a < out.size(); ++a) {
    if (out[a] == 1) continue;
    bool merge = !dims.empty();
    for (int j = 0; j < N && merge; ++j) merge = str[j].back() == st[j][a] * out[a];
    if (merge) {
      dims.back() *= out[a];
      for (int j = 0; j < N; ++j) str[j].back() = st[j][a];
    } else {
      dims.push_back(out[a]);
      for (int j = 0; j < N; ++j) str[j].push_back(st[j][a]);
    }
  }
  if (dims.size() > static_cast<size_t>(kMaxDims)) return false;
  s->rank = static_cast<int>(dims.size());
  for (int a = 0; a < s->rank; ++a) {
    s->dims[a] = dims[a];
    for (int j = 0; j < N; ++j) s->strides[j][a] = str[j][a];
  }
  return true;
}

// Flat output index -> per-operand offsets (row-major over s.dims).
template <int N, typename I>
__device__ __forceinline__ void offsetsOf(const StridedShape<N>& s, I i, I (&off)[N]) {
#pragma unroll
  for (int j = 0; j < N; ++j) off[j] = 0;
  for (int a = s.rank - 1; a >= 0; --a) {
    const I d = static_cast<I>(s.dims[a]);
    const I q = i / d, c = i - q * d;
    i = q;
#pragma unroll
    for (int j = 0; j < N; ++j) off[j] += c * static_cast<I>(s.strides[j][a]);
  }
}

// ---------------------------------------------------------------------------------------------
// Launch helpers
// ---------------------------------------------------------------------------------------------

constexpr int kThreads = 256;

inline unsigned blocksFor(int64_t n, int threads = kThreads) {
  return gridFor(n, threads, 132 * 64);
}

inline bool aligned16(const void* p) {
  return (reinterpret_cast<uintptr_t>(p) & 15u) == 0;
}

template <typename T, int N>
struct alignas(sizeof(T) * N) Vec {
  T v[N];
};

// ---------------------------------------------------------------------------------------------
// Device side of run-time error reports
// ---------------------------------------------------------------------------------------------

// reportDeviceError() (opforge/device_error.h) fills a layer's record.

// An index in [-n, n) made non-negative; false (and `i` clamped into [0, n)) when out of range.
__device__ __forceinline__ bool normIndexDev(int64_t& i, int64_t n) {
  if (i < -n || i >= n) {
    i = 0;
    return false;
  }
  if (i < 0) i += n;
  return true;
}

__device__ __forceinline__ int64_t loadIndex(const void* p, bool is64, int64_t i) {
  return is64 ? static_cast<const int64_t*>(p)[i]
              : static_cast<int64_t>(static_cast<const int32_t*>(p)[i]);
}

// ---------------------------------------------------------------------------------------------
// Host helpers
// ---------------------------------------------------------------------------------------------

inline Status launched(const char* op) {
  return lastLaunch(op);
}

// A tactic's input i is present.
inline bool present(std::span<const Tensor> in, size_t i) {
  return hasIn(in, i);
}
inline bool present(std::span<const TensorDesc> in, size_t i) {
  return i < in.size() && in[i].dtype != DataType::kUndefined;
}

// Every present tensor of rank >= 3 of the layer has format `f` (lower ranks have no layout).
inline bool allFormat(Format f, std::span<const TensorDesc> in, std::span<const TensorDesc> out) {
  auto ok = [f](const TensorDesc& d) { return d.format == f || d.rank() < 3; };
  for (const auto& d : in)
    if (d.dtype != DataType::kUndefined && !ok(d)) return false;
  for (const auto& d : out)
    if (!ok(d)) return false;
  return true;
}

// Every tensor of the layer is LINEAR (the ONNX ops' CUDA tactics work on LINEAR tensors).
inline bool allLinear(std::span<const TensorDesc> in, std::span<const TensorDesc> out) {
  return allFormat(Format::kLinear, in, out);
}

// Every tensor of rank >= 3 is HWC (channels-last).
inline bool allHwc(std::span<const TensorDesc> in, std::span<const TensorDesc> out) {
  return allFormat(Format::kHWC, in, out);
}

// The applies() of tactics that handle any LINEAR shapes of their op.
inline bool linearOnly(const AttrMap&, std::span<const TensorDesc> in,
                       std::span<const TensorDesc> out) {
  return allLinear(in, out);
}

}  // namespace opforge::ops
