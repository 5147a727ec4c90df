// CUDA tactic of ai.onnx::ReverseSequence, cuda.gather: a thread per output element reads the
// element its time step maps to (len - 1 - t within the first `len` steps, t after them). A length
// outside [0, time length] is reported through the layer's device error record (negative, or
// larger than the axis) and clamped into the range; elements move as bytes.
#include "../common/cuda_common.cuh"

namespace opforge::ops {
namespace {

struct Geom {
  int64_t nb, nt, inner, sb, st, d1;
  bool batch_first;
};

template <typename S>
__global__ void reverseKernel(const S* __restrict__ x, const int64_t* __restrict__ lens,
                              S* __restrict__ y, Geom g, DeviceErrorRecord* rec) {
  const int64_t total = g.nb * g.nt * g.inner, stride = int64_t(gridDim.x) * blockDim.x;
  for (int64_t e = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; e < total; e += stride) {
    const int64_t i = e % g.inner, pair = e / g.inner;
    // (axis 0, axis 1) of the output element -> (batch, time).
    const int64_t a1 = pair % g.d1, a0 = pair / g.d1;
    const int64_t b = g.batch_first ? a0 : a1, t = g.batch_first ? a1 : a0;
    int64_t len = lens[b];
    if (len < 0) {
      if (t == 0 && i == 0) reportDeviceError(rec, kDeviceErrorNegative, 1, len, b, 0, 0);
      len = 0;
    } else if (len > g.nt) {
      if (t == 0 && i == 0) reportDeviceError(rec, kDeviceErrorSize, 1, len, b, g.nt, 0);
      len = g.nt;
    }
    const int64_t from = t < len ? len - 1 - t : t;
    y[e] = x[b * g.sb + from * g.st + i];
  }
}

Status reverseCuda(KernelContext& k, std::span<const Tensor> in, std::span<const Tensor> out) {
  const auto& d = in[0].desc.dims;
  const int ba = static_cast<int>(k.attr<int64_t>("batch_axis"));
  Geom g;
  g.nb = d[ba];
  g.nt = d[1 - ba];
  g.inner = prodOf(d, 2, in[0].desc.rank());
  g.sb = ba == 0 ? g.nt * g.inner : g.inner;
  g.st = ba == 0 ? g.inner : g.nb * g.inner;
  g.d1 = d[1];
  g.batch_first = ba == 0;
  const int64_t total = in[0].numel();
  if (total == 0) return Status::ok();
  return visitDeviceBySize(in[0].desc.dtype, "ReverseSequence", [&](auto tag) -> Status {
    using S = typename decltype(tag)::type;
    reverseKernel<S><<<blocksFor(total), kThreads, 0, streamOf(k)>>>(
        static_cast<const S*>(in[0].data), static_cast<const int64_t*>(in[1].data),
        static_cast<S*>(out[0].data), g, k.errorRecord());
    return launched("ReverseSequence");
  });
}
}  // namespace

OPFORGE_TACTICS("ai.onnx::ReverseSequence",
                [](OpDef& d) { d.tactic(1, "cuda.gather", reverseCuda, linearOnly); });

}  // namespace opforge::ops
