// CUDA tactic of ai.onnx::CenterCropPad, cuda.gather: a thread per output element finds its input
// element (output index + the axis's shift, centercroppad.h) or writes zero where it falls in the
// padding. Elements move as bytes.
#include "centercroppad.h"

#include "../common/cuda_common.cuh"

namespace opforge::ops {
namespace {

struct Geom {
  int rank;
  int64_t yd[kMaxDims], xd[kMaxDims], xs[kMaxDims], shift[kMaxDims];
};

template <typename S>
__global__ void cropPadKernel(const S* __restrict__ x, S* __restrict__ y, Geom g, int64_t total) {
  const int64_t stride = int64_t(gridDim.x) * blockDim.x;
  for (int64_t t = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; t < total; t += stride) {
    int64_t rem = t, off = 0;
    bool inside = true;
    for (int a = g.rank - 1; a >= 0; --a) {
      const int64_t o = rem % g.yd[a];
      rem /= g.yd[a];
      const int64_t i = o + g.shift[a];
      inside = inside && i >= 0 && i < g.xd[a];
      off += i * g.xs[a];
    }
    y[t] = inside ? x[off] : S{};
  }
}

Status cropPadCuda(KernelContext& k, std::span<const Tensor> in, std::span<const Tensor> out) {
  const auto &xd = in[0].desc.dims, &yd = out[0].desc.dims;
  Geom g{};
  g.rank = static_cast<int>(xd.size());
  const auto xs = stridesOf(xd);
  for (int a = 0; a < g.rank; ++a) {
    g.yd[a] = yd[a];
    g.xd[a] = xd[a];
    g.xs[a] = xs[a];
    g.shift[a] = centerShift(xd[a], yd[a]);
  }
  const int64_t total = out[0].numel();
  if (total == 0) return Status::ok();
  return visitDeviceBySize(in[0].desc.dtype, "CenterCropPad", [&](auto tag) -> Status {
    using S = typename decltype(tag)::type;
    cropPadKernel<S><<<blocksFor(total), kThreads, 0, streamOf(k)>>>(
        static_cast<const S*>(in[0].data), static_cast<S*>(out[0].data), g, total);
    return launched("CenterCropPad");
  });
}

bool cropPadApplies(const AttrMap&, std::span<const TensorDesc> in,
                    std::span<const TensorDesc> out) {
  return allLinear(in, out) && in[0].rank() <= kMaxDims;
}
}  // namespace

OPFORGE_TACTICS("ai.onnx::CenterCropPad",
                [](OpDef& d) { d.tactic(1, "cuda.gather", cropPadCuda, cropPadApplies); });

}  // namespace opforge::ops
