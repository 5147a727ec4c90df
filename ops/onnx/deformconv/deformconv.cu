// CUDA tactic of ai.onnx::DeformConv, cuda.direct: a thread per output element (b, oC, i, j) sums
// its group's input channels and kernel taps in double, in the reference's order (deformconv.h):
// bilinear samples at the offset positions, times the weight and the mask. No atomics.
#include "deformconv.h"

#include "../common/cuda_common.cuh"

namespace opforge::ops {
namespace {

template <typename S>
struct Loader {
  const S* p;
  __device__ double operator()(int64_t i) const { return static_cast<double>(DNum<S>::load(p[i])); }
};

template <typename S>
__global__ void deformKernel(const S* __restrict__ x, const S* __restrict__ w,
                             const S* __restrict__ off, const S* __restrict__ bias,
                             const S* __restrict__ mask, S* __restrict__ y, DeformGeom g) {
  const int64_t total = g.n * g.oc * g.oh * g.ow, stride = int64_t(gridDim.x) * blockDim.x;
  for (int64_t t = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; t < total; t += stride) {
    const int64_t j = t % g.ow, i = (t / g.ow) % g.oh, o = (t / (g.ow * g.oh)) % g.oc,
                  b = t / (g.ow * g.oh * g.oc);
    const double v = deformOutput(g, b, o, i, j, Loader<S>{x}, Loader<S>{w}, Loader<S>{off},
                                  Loader<S>{mask}, Loader<S>{bias});
    y[t] = DNum<S>::store(static_cast<typename DNum<S>::C>(v));
  }
}

Status deformCuda(KernelContext& k, std::span<const Tensor> in, std::span<const Tensor> out) {
  DeformGeom g{};
  const auto &xd = in[0].desc.dims, &wd = in[1].desc.dims, &od = in[2].desc.dims;
  g.n = xd[0], g.ic = xd[1], g.ih = xd[2], g.iw = xd[3];
  g.oc = wd[0], g.kh = wd[2], g.kw = wd[3];
  g.oh = od[2], g.ow = od[3];
  g.group = k.attr<int64_t>("group");
  g.offset_group = k.attr<int64_t>("offset_group");
  const auto& a = k.attrs();
  auto list = [&](const char* n, size_t c, int64_t d) {
    return a.has(n) ? a.get<std::vector<int64_t>>(n) : std::vector<int64_t>(c, d);
  };
  const auto s = list("strides", 2, 1), d = list("dilations", 2, 1), p = list("pads", 4, 0);
  g.sh = s[0], g.sw = s[1], g.dh = d[0], g.dw = d[1], g.ph = p[0], g.pw = p[1];
  g.has_bias = present(in, 3);
  g.has_mask = present(in, 4);
  const int64_t total = out[0].numel();
  if (total == 0) return Status::ok();
  return visitDevice<kFloats>(in[0].desc.dtype, "DeformConv", [&](auto tag) -> Status {
    using S = typename decltype(tag)::type;
    deformKernel<S><<<blocksFor(total, 128), 128, 0, streamOf(k)>>>(
        static_cast<const S*>(in[0].data), static_cast<const S*>(in[1].data),
        static_cast<const S*>(in[2].data), g.has_bias ? static_cast<const S*>(in[3].data) : nullptr,
        g.has_mask ? static_cast<const S*>(in[4].data) : nullptr, static_cast<S*>(out[0].data), g);
    return launched("DeformConv");
  });
}
}  // namespace

OPFORGE_TACTICS("ai.onnx::DeformConv",
                [](OpDef& d) { d.tactic(1, "cuda.direct", deformCuda, linearOnly); });

}  // namespace opforge::ops
