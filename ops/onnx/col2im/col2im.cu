// CUDA tactic of ai.onnx::Col2Im, cuda.gather: a thread per image element (n, c, position) sums,
// in double and in block-index order (the reference's order), the one column entry each block
// offset k contributes: the block position l with l * stride - pad + k * dilation = position,
// where it exists. No atomics: deterministic.
#include "col2im.h"

#include "../common/cuda_common.cuh"

namespace opforge::ops {
namespace {

constexpr int kMaxSpatial = kMaxDims - 2;

struct Geom {
  int nd;
  int64_t n, ch, kprod, cols, img;
  int64_t size[kMaxSpatial], dil[kMaxSpatial], stride[kMaxSpatial], pb[kMaxSpatial],
      pe[kMaxSpatial];
};

template <typename S>
__global__ void col2imKernel(const S* __restrict__ x, const int64_t* __restrict__ blocks,
                             S* __restrict__ y, Geom g) {
  // block_shape is read on the device (the shape rule checked it); the block counts follow.
  int64_t block[kMaxSpatial], nblk[kMaxSpatial];
  for (int d = 0; d < g.nd; ++d) {
    block[d] = blocks[d];
    nblk[d] = (g.size[d] + g.pb[d] + g.pe[d] - (g.dil[d] * (block[d] - 1) + 1)) / g.stride[d] + 1;
  }
  const int64_t total = g.n * g.ch * g.img, step = int64_t(gridDim.x) * blockDim.x;
  for (int64_t t = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; t < total; t += step) {
    const int64_t nc = t / g.img;
    int64_t pos[kMaxSpatial];
    for (int64_t d = g.nd - 1, rem = t % g.img; d >= 0; --d) {
      pos[d] = rem % g.size[d];
      rem /= g.size[d];
    }
    double sum = 0;
    for (int64_t kk = 0; kk < g.kprod; ++kk) {
      int64_t l = 0, rem = kk;
      int64_t kix[kMaxSpatial];
      for (int d = g.nd - 1; d >= 0; --d) {
        kix[d] = rem % block[d];
        rem /= block[d];
      }
      bool hit = true;
      for (int d = 0; d < g.nd && hit; ++d) {
        const int64_t q = pos[d] + g.pb[d] - kix[d] * g.dil[d];
        hit = q >= 0 && q % g.stride[d] == 0 && q / g.stride[d] < nblk[d];
        l = l * nblk[d] + (hit ? q / g.stride[d] : 0);
      }
      if (hit) sum += static_cast<double>(DNum<S>::load(x[(nc * g.kprod + kk) * g.cols + l]));
    }
    y[t] = DNum<S>::store(static_cast<typename DNum<S>::C>(sum));
  }
}

Geom geomOf(const AttrMap& a, std::span<const TensorDesc> in, std::span<const TensorDesc> out) {
  const auto& yd = out[0].dims;
  Geom g{};
  g.nd = static_cast<int>(yd.size()) - 2;
  const Col2ImGeom w = col2imGeom(a, static_cast<size_t>(g.nd));
  g.n = yd[0];
  g.ch = yd[1];
  g.cols = in[0].dims[2];
  g.img = prodOf(yd, 2, static_cast<int>(yd.size()));
  g.kprod = g.ch == 0 ? 0 : in[0].dims[1] / g.ch;
  for (int d = 0; d < g.nd && d < kMaxSpatial; ++d) {
    g.size[d] = yd[2 + d];
    g.dil[d] = w.dil[d];
    g.stride[d] = w.stride[d];
    g.pb[d] = w.pb[d];
    g.pe[d] = w.pe[d];
  }
  return g;
}

Status col2imCuda(KernelContext& k, std::span<const Tensor> in, std::span<const Tensor> out) {
  const TensorDesc ins[1] = {in[0].desc};
  const TensorDesc outs[1] = {out[0].desc};
  const Geom g = geomOf(k.attrs(), ins, outs);
  const int64_t total = out[0].numel();
  if (total == 0) return Status::ok();
  return visitDevice<kFloats>(in[0].desc.dtype, "Col2Im", [&](auto tag) -> Status {
    using S = typename decltype(tag)::type;
    col2imKernel<S><<<blocksFor(total), kThreads, 0, streamOf(k)>>>(
        static_cast<const S*>(in[0].data), static_cast<const int64_t*>(in[2].data),
        static_cast<S*>(out[0].data), g);
    return launched("Col2Im");
  });
}

bool col2imApplies(const AttrMap&, std::span<const TensorDesc> in,
                   std::span<const TensorDesc> out) {
  return allLinear(in, out) && out[0].rank() - 2 <= kMaxSpatial;
}
}  // namespace

OPFORGE_TACTICS("ai.onnx::Col2Im",
                [](OpDef& d) { d.tactic(1, "cuda.gather", col2imCuda, col2imApplies); });

}  // namespace opforge::ops
