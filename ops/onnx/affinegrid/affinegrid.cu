// CUDA tactic of ai.onnx::AffineGrid, cuda.direct: a thread per grid point computes its base
// coordinates (affinegrid.h) and the nd sums theta[n, r, :] · (x, y, (z,) 1) in double, as the
// reference.
#include "affinegrid.h"

#include "../common/cuda_common.cuh"

namespace opforge::ops {
namespace {

struct Geom {
  int64_t n, d, h, w;
  int nd;
  bool align;
};

template <typename S>
__global__ void affineKernel(const S* __restrict__ theta, S* __restrict__ y, Geom g) {
  const int64_t total = g.n * g.d * g.h * g.w, stride = int64_t(gridDim.x) * blockDim.x;
  for (int64_t t = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; t < total; t += stride) {
    const int64_t xx = t % g.w, yy = (t / g.w) % g.h, z = (t / (g.w * g.h)) % g.d,
                  b = t / (g.w * g.h * g.d);
    double base[4] = {affineBase(xx, g.w, g.align), affineBase(yy, g.h, g.align), 0, 0};
    if (g.nd == 3) base[2] = affineBase(z, g.d, g.align);
    base[g.nd] = 1;
    for (int r = 0; r < g.nd; ++r) {
      double s = 0;
      for (int j = 0; j <= g.nd; ++j)
        s += static_cast<double>(DNum<S>::load(theta[(b * g.nd + r) * (g.nd + 1) + j])) * base[j];
      y[t * g.nd + r] = DNum<S>::store(static_cast<typename DNum<S>::C>(s));
    }
  }
}

Status affineCuda(KernelContext& k, std::span<const Tensor> in, std::span<const Tensor> out) {
  const auto& yd = out[0].desc.dims;
  Geom g;
  g.nd = static_cast<int>(yd.size()) - 2;
  g.n = yd[0];
  g.d = g.nd == 3 ? yd[1] : 1;
  g.h = yd[g.nd - 1];
  g.w = yd[g.nd];
  g.align = k.attr<int64_t>("align_corners") != 0;
  const int64_t total = g.n * g.d * g.h * g.w;
  if (total == 0) return Status::ok();
  return visitDevice<kFloats>(in[0].desc.dtype, "AffineGrid", [&](auto tag) -> Status {
    using S = typename decltype(tag)::type;
    affineKernel<S><<<blocksFor(total), kThreads, 0, streamOf(k)>>>(
        static_cast<const S*>(in[0].data), static_cast<S*>(out[0].data), g);
    return launched("AffineGrid");
  });
}
}  // namespace

OPFORGE_TACTICS("ai.onnx::AffineGrid",
                [](OpDef& d) { d.tactic(1, "cuda.direct", affineCuda, linearOnly); });

}  // namespace opforge::ops
