// CUDA tactic of opforge::Roll: one pass, each thread copying a unit of 16, 8, 4, 2 or 1 bytes
// (the widest that the block behind the last rolled axis and the pointers allow). Axes not rolled
// are merged with their neighbours, so a roll of [N, H, W, C] over H and W indexes [N, H, W,
// C-units]; index arithmetic is 32-bit where the tensor allows.
#include "../../onnx/common/cuda_common.cuh"
#include "roll.h"

namespace opforge::ops {
namespace {

struct RollGeom {
  int rank;
  int64_t dims[kMaxDims], back[kMaxDims], strides[kMaxDims];  // back = (d - shift) mod d
};

template <typename U, typename I>
__global__ void __launch_bounds__(kThreads)
    rollKernel(const U* __restrict__ x, U* __restrict__ y, RollGeom g, I n) {
  const I stride = I(gridDim.x) * blockDim.x;
  for (I i = I(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) {
    I rem = i, off = 0;
    for (int a = g.rank - 1; a >= 0; --a) {
      const I d = static_cast<I>(g.dims[a]), q = rem / d, c = rem - q * d;
      rem = q;
      I s = c + static_cast<I>(g.back[a]);  // (c - shift) mod d
      if (s >= d) s -= d;
      off += s * static_cast<I>(g.strides[a]);
    }
    y[i] = x[off];
  }
}

template <typename U>
Status launchRoll(const void* x, void* y, const RollGeom& g, int64_t n, cudaStream_t st) {
  if (n < (int64_t{1} << 31))
    rollKernel<U, uint32_t><<<blocksFor(n), kThreads, 0, st>>>(
        static_cast<const U*>(x), static_cast<U*>(y), g, static_cast<uint32_t>(n));
  else
    rollKernel<U, uint64_t><<<blocksFor(n), kThreads, 0, st>>>(
        static_cast<const U*>(x), static_cast<U*>(y), g, static_cast<uint64_t>(n));
  return launched("Roll");
}

Status rollCuda(KernelContext& k, std::span<const Tensor> in, std::span<const Tensor> out) {
  const Tensor &x = in[0], &y = out[0];
  if (y.desc.dtype != x.desc.dtype || y.desc.dims != x.desc.dims)
    return Status::invalid("output " + describe(y.desc) + " differs from data " + describe(x.desc));
  OPFORGE_ASSIGN_OR_RETURN(auto shift, rollShifts(k.attrs(), x.desc.dims));
  if (y.numel() == 0) return Status::ok();
  cudaStream_t st = streamOf(k);
  // Merged axes, outermost first: a rolled axis stands alone, runs of the others become one.
  std::vector<int64_t> dims, shifts;
  for (int a = 0; a < x.desc.rank(); ++a) {
    const int64_t d = x.desc.dims[a];
    if (d == 1) continue;
    if (shift[a] == 0 && !dims.empty() && shifts.back() == 0)
      dims.back() *= d;
    else
      dims.push_back(d), shifts.push_back(shift[a]);
  }
  size_t es = dtypeSize(x.desc.dtype);
  if (dims.empty() || shifts.back() != 0) dims.push_back(1), shifts.push_back(0);
  // The block behind the last rolled axis in the widest unit it, and both pointers, allow.
  const int64_t block_bytes = dims.back() * static_cast<int64_t>(es);
  size_t unit = 16;
  while (unit > 1 && (block_bytes % static_cast<int64_t>(unit) != 0 ||
                      reinterpret_cast<uintptr_t>(x.data) % unit != 0 ||
                      reinterpret_cast<uintptr_t>(y.data) % unit != 0))
    unit /= 2;
  dims.back() = block_bytes / static_cast<int64_t>(unit);
  if (dims.size() > static_cast<size_t>(kMaxDims))
    return Status::unsupported("Roll (CUDA): more than " + std::to_string(kMaxDims) +
                               " axes after merging");
  RollGeom g{};
  g.rank = static_cast<int>(dims.size());
  int64_t n = 1;
  for (int a = g.rank - 1; a >= 0; --a) {
    g.dims[a] = dims[a];
    g.back[a] = shifts[a] == 0 ? 0 : dims[a] - shifts[a];
    g.strides[a] = n;
    n *= dims[a];
  }
  switch (unit) {
    case 16:
      return launchRoll<uint4>(x.data, y.data, g, n, st);
    case 8:
      return launchRoll<uint2>(x.data, y.data, g, n, st);
    case 4:
      return launchRoll<uint32_t>(x.data, y.data, g, n, st);
    case 2:
      return launchRoll<uint16_t>(x.data, y.data, g, n, st);
    default:
      return launchRoll<uint8_t>(x.data, y.data, g, n, st);
  }
}

}  // namespace

OPFORGE_TACTICS("opforge::Roll", [](OpDef& d) { d.tactic(1, "cuda.units", rollCuda, linearOnly); });

}  // namespace opforge::ops
