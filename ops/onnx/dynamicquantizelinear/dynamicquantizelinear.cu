// CUDA tactic of ai.onnx::DynamicQuantizeLinear, cuda.reduce: (1) blocks reduce grid-stride ranges
// of x to partial minima and maxima (NaN skipped, 0 included); (2) one block reduces the partials
// and writes y_scale and y_zero_point (and keeps them in the workspace); (3) a thread per element
// quantizes (dynamicquantizelinear.h, FP32 rounded as the reference). Min and max do not depend on
// the order: the result equals the reference's exactly.
#include <cub/block/block_reduce.cuh>

#include "dynamicquantizelinear.h"

#include "../common/cuda_common.cuh"

namespace opforge::ops {
namespace {

constexpr int kPartials = 1024;

struct MinMax {
  float lo, hi;
};
struct MinMaxOp {
  __device__ MinMax operator()(const MinMax& a, const MinMax& b) const {
    return {fminf(a.lo, b.lo), fmaxf(a.hi, b.hi)};
  }
};

__global__ void __launch_bounds__(kThreads)
    partialKernel(const float* __restrict__ x, int64_t n, MinMax* __restrict__ part) {
  using Reduce = cub::BlockReduce<MinMax, kThreads>;
  __shared__ typename Reduce::TempStorage tmp;
  MinMax m{0.0f, 0.0f};
  const int64_t stride = int64_t(gridDim.x) * blockDim.x;
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) {
    const float v = x[i];
    if (isnan(v)) continue;
    m.lo = fminf(m.lo, v);
    m.hi = fmaxf(m.hi, v);
  }
  const MinMax r = Reduce(tmp).Reduce(m, MinMaxOp{});
  if (threadIdx.x == 0) part[blockIdx.x] = r;
}

__global__ void __launch_bounds__(kThreads)
    paramsKernel(const MinMax* __restrict__ part, int parts, DqlParams* __restrict__ params,
                 float* __restrict__ y_scale, uint8_t* __restrict__ y_zp) {
  using Reduce = cub::BlockReduce<MinMax, kThreads>;
  __shared__ typename Reduce::TempStorage tmp;
  MinMax m{0.0f, 0.0f};
  for (int i = threadIdx.x; i < parts; i += blockDim.x) m = MinMaxOp{}(m, part[i]);
  const MinMax r = Reduce(tmp).Reduce(m, MinMaxOp{});
  if (threadIdx.x == 0) {
    const DqlParams p = dqlParams(r.lo, r.hi);
    *params = p;
    *y_scale = p.scale;
    *y_zp = static_cast<uint8_t>(p.zero_point);
  }
}

__global__ void quantizeKernel(const float* __restrict__ x, uint8_t* __restrict__ y, int64_t n,
                               const DqlParams* __restrict__ params) {
  const DqlParams p = *params;
  const int64_t stride = int64_t(gridDim.x) * blockDim.x;
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride)
    y[i] = dqlQuantize(x[i], p);
}

int partsFor(int64_t n) {
  return static_cast<int>(
      std::max<int64_t>(1, std::min<int64_t>(kPartials, (n + kThreads - 1) / kThreads)));
}

Status dqlCuda(KernelContext& k, std::span<const Tensor> in, std::span<const Tensor> out) {
  const int64_t n = in[0].numel();
  cudaStream_t st = streamOf(k);
  auto* base = static_cast<uint8_t*>(k.workspace());
  auto* params = reinterpret_cast<DqlParams*>(base);
  auto* part = reinterpret_cast<MinMax*>(base + 256);
  const auto* x = static_cast<const float*>(in[0].data);
  const int parts = partsFor(n);
  partialKernel<<<parts, kThreads, 0, st>>>(x, n, part);
  OPFORGE_RETURN_IF_ERROR(launched("DynamicQuantizeLinear"));
  paramsKernel<<<1, kThreads, 0, st>>>(part, parts, params, static_cast<float*>(out[1].data),
                                       static_cast<uint8_t*>(out[2].data));
  OPFORGE_RETURN_IF_ERROR(launched("DynamicQuantizeLinear"));
  if (n == 0) return Status::ok();
  quantizeKernel<<<blocksFor(n), kThreads, 0, st>>>(x, static_cast<uint8_t*>(out[0].data), n,
                                                    params);
  return launched("DynamicQuantizeLinear");
}

size_t dqlWorkspace(const AttrMap&, std::span<const TensorDesc>, std::span<const TensorDesc>) {
  return 256 + kPartials * sizeof(MinMax);
}
}  // namespace

OPFORGE_TACTICS("ai.onnx::DynamicQuantizeLinear",
                [](OpDef& d) { d.tactic(1, "cuda.reduce", dqlCuda, linearOnly, dqlWorkspace); });

}  // namespace opforge::ops
