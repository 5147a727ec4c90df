// CUDA tactic of ai.onnx::RotaryEmbedding, cuda.direct: a thread per output element computes
// cos * x[d] + sign * sin * x[partner] (rotaryembedding.h) in double, or copies elements past the
// rotated part. A position id outside the caches' rows is reported through the layer's device
// error record and clamped to row 0.
#include "rotaryembedding.h"

#include "../common/cuda_common.cuh"

namespace opforge::ops {
namespace {

template <typename S>
__global__ void ropeKernel(const S* __restrict__ x, const S* __restrict__ cosc,
                           const S* __restrict__ sinc, const int64_t* __restrict__ pid,
                           S* __restrict__ y, RopeGeom g, DeviceErrorRecord* rec) {
  const int64_t total = g.b * g.s * g.h * g.d, stride = int64_t(gridDim.x) * blockDim.x,
                half = g.r / 2;
  for (int64_t t = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; t < total; t += stride) {
    // t enumerates (b, s, h, d) in logical order; offset() places it in memory.
    const int64_t d = t % g.d, h = (t / g.d) % g.h, s = (t / (g.d * g.h)) % g.s,
                  b = t / (g.d * g.h * g.s);
    const int64_t at = g.offset(b, s, h, d);
    if (d >= g.r) {
      y[at] = x[at];
      continue;
    }
    int64_t row = b * g.s + s;
    if (g.has_pos) {
      row = pid[b * g.s + s];
      if (row < 0 || row >= g.max_pos) {
        if (h == 0 && d == 0)
          reportDeviceError(rec, kDeviceErrorRegion, 3, row, b * g.s + s, g.max_pos, 0, 1, 1);
        row = 0;
      }
    }
    const RopeTap tp = ropeTap(g, d);
    const double c = static_cast<double>(DNum<S>::load(cosc[row * half + tp.i]));
    const double sn = static_cast<double>(DNum<S>::load(sinc[row * half + tp.i]));
    const double v =
        c * static_cast<double>(DNum<S>::load(x[at])) +
        tp.sign * sn * static_cast<double>(DNum<S>::load(x[g.offset(b, s, h, tp.partner)]));
    y[at] = DNum<S>::store(static_cast<typename DNum<S>::C>(v));
  }
}

Status ropeCuda(KernelContext& k, std::span<const Tensor> in, std::span<const Tensor> out) {
  const auto& x = in[0].desc.dims;
  const bool has_pos = present(in, 3);
  RopeGeom g{};
  g.four_d = x.size() == 4;
  g.b = x[0];
  if (g.four_d) {
    g.h = x[1], g.s = x[2], g.d = x[3];
  } else {
    g.s = x[1];
    g.h = k.attr<int64_t>("num_heads");
    g.d = x[2] / g.h;
  }
  const int64_t r = k.attr<int64_t>("rotary_embedding_dim");
  g.r = r > 0 ? r : g.d;
  g.interleaved = k.attr<int64_t>("interleaved") != 0;
  g.has_pos = has_pos;
  g.max_pos = has_pos ? in[1].desc.dims[0] : 0;
  const int64_t total = in[0].numel();
  if (total == 0) return Status::ok();
  return visitDevice<kFloats>(in[0].desc.dtype, "RotaryEmbedding", [&](auto tag) -> Status {
    using S = typename decltype(tag)::type;
    ropeKernel<S><<<blocksFor(total), kThreads, 0, streamOf(k)>>>(
        static_cast<const S*>(in[0].data), static_cast<const S*>(in[1].data),
        static_cast<const S*>(in[2].data),
        has_pos ? static_cast<const int64_t*>(in[3].data) : nullptr, static_cast<S*>(out[0].data),
        g, k.errorRecord());
    return launched("RotaryEmbedding");
  });
}
}  // namespace

OPFORGE_TACTICS("ai.onnx::RotaryEmbedding",
                [](OpDef& d) { d.tactic(1, "cuda.direct", ropeCuda, linearOnly); });

}  // namespace opforge::ops
