// deformable_aggregation.cuh — device pieces shared by the CUDA tactics of
// opforge::DeformableAggregation and opforge::DeformableAggregationGrad: the table validation that
// keeps every feature read inside F and reports a bad entry, and vector loads of feature channels.
#pragma once

#include <climits>

#include "../common/vec.cuh"
#include "deformable_aggregation.h"

namespace opforge::contrib::cu {

// The feature types of the CUDA tactics (locations and weights are FP32).
constexpr unsigned kDaFeatTypes = ops::kF32 | ops::kF16 | ops::kBF16;

// Workspace layout: the validation flag first (256 bytes), then what a tactic adds.
constexpr size_t kDaFlagBytes = 256;

// One block: flag = the first (camera, level) whose region [start, start + H*W) leaves [0, F) or
// whose H or W is negative, -1 when none does. The kernels read the flag before touching features
// (a bad table: every output NaN, no feature read). A bad entry is also reported into `rec` (the
// layer's record, opforge/device_error.h; nullptr: not reported), which the engine reads after the
// stream is synchronized: the tactic itself never waits, so it runs the same under graph capture.
__global__ void daValidateTables(const int32_t* __restrict__ sp, const int32_t* __restrict__ st,
                                 int n, int64_t F, int* __restrict__ flag, DeviceErrorRecord* rec);

Status daLaunchValidation(const Tensor& spatial, const Tensor& start, int64_t F, int* flag,
                          DeviceErrorRecord* rec, cudaStream_t s);

// V channels of type T as one load of V * sizeof(T) bytes (2, 4, 8 or 16), through the read-only
// path.
template <int Bytes>
struct VecWord;
template <>
struct VecWord<2> {
  using type = unsigned short;
};
template <>
struct VecWord<4> {
  using type = unsigned int;
};
template <>
struct VecWord<8> {
  using type = uint2;
};
template <>
struct VecWord<16> {
  using type = uint4;
};

template <typename T, int V>
union ChanVec {
  using Word = typename VecWord<V * sizeof(typename ops::DNum<T>::Bits)>::type;
  Word w;
  typename ops::DNum<T>::Bits b[V];
};

template <typename T, int V>
__device__ __forceinline__ typename ChanVec<T, V>::Word loadChan(const T* p) {
  return __ldg(reinterpret_cast<const typename ChanVec<T, V>::Word*>(p));
}

template <typename T, int V>
__device__ __forceinline__ void storeChan(T* p, const float (&v)[V]) {
  ChanVec<T, V> c;
#pragma unroll
  for (int e = 0; e < V; ++e) c.b[e] = ops::DNum<T>::storeBits(v[e]);
  *reinterpret_cast<typename ChanVec<T, V>::Word*>(p) = c.w;
}

// Largest V in {8, 4, 2, 1} with V * sizeof(T) <= 16 that divides the channels of one group and
// keeps every access of the given pointers aligned.
template <typename T>
int daPickVec(int64_t channels_per_group, std::initializer_list<const void*> ptrs) {
  for (int v = static_cast<int>(16 / sizeof(T)); v > 1; v /= 2) {
    bool ok = channels_per_group % v == 0;
    for (const void* p : ptrs) ok &= reinterpret_cast<uintptr_t>(p) % (v * sizeof(T)) == 0;
    if (ok) return v;
  }
  return 1;
}

// Bilinear geometry of one sample in fp32 (the same corners and weights as daCorners).
struct DaGeom {
  int x0, y0;
  float ax, ay;
};
__device__ __forceinline__ DaGeom daGeom(float u, float v, int H, int W) {
  const float x = fmaf(u, static_cast<float>(W), -0.5f), y = fmaf(v, static_cast<float>(H), -0.5f);
  const float fx = floorf(x), fy = floorf(y);
  return DaGeom{static_cast<int>(fx), static_cast<int>(fy), x - fx, y - fy};
}
__device__ __forceinline__ bool daValidF(float u, float v) {
  return u > 0.f && u < 1.f && v > 0.f && v < 1.f;
}

}  // namespace opforge::contrib::cu
