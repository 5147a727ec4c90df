// CUDA tactic of ai.onnx::STFT, cuda.direct: a thread per (batch, frame, bin) takes the direct
// O(frame length) sum of common/dft.h in double (each twiddle from the exact residue k t mod fl).
// Meant for short frames (the usual 256-2048): it applies up to frames of 8192 samples (longer
// ones would want an FFT; none is offered here). frame_step and frame_length are read on the
// device; a value the output shape does not allow is reported through the device error record
// (the output is then zero).
#include "../common/cuda_common.cuh"
#include "../common/dft.h"

namespace opforge::ops {
namespace {

constexpr int64_t kMaxFrame = 8192;

template <typename S>
__global__ void stftKernel(const S* __restrict__ x, const S* __restrict__ w, S* __restrict__ y,
                           StftGeom g, const void* step, bool step64, const void* fl, bool fl64,
                           DeviceErrorRecord* rec) {
  g.step = loadIndex(step, step64, 0);
  if (fl) g.fl = loadIndex(fl, fl64, 0);
  const bool ok = g.step >= 1 && g.fl >= 1 && g.fl <= g.L && g.fl <= kMaxFrame &&
                  1 + (g.L - g.fl) / g.step == g.frames;
  if (!ok && blockIdx.x == 0 && threadIdx.x == 0)
    reportDeviceError(rec, kDeviceErrorValue, 1, g.step, 0, g.L, 1);
  const int64_t total = g.batch * g.frames * g.bins, stride = int64_t(gridDim.x) * blockDim.x;
  for (int64_t e = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; e < total; e += stride) {
    const int64_t k = e % g.bins, f = (e / g.bins) % g.frames, b = e / (g.bins * g.frames);
    double re = 0, im = 0;
    if (ok)
      stftElement(
          g, b, f, k,
          [&](int64_t bb, int64_t s, int part) {
            return static_cast<double>(DNum<S>::load(x[(bb * g.L + s) * g.in_c + part]));
          },
          [&](int64_t t) { return static_cast<double>(DNum<S>::load(w[t])); }, re, im);
    using C = typename DNum<S>::C;
    y[e * 2] = DNum<S>::store(static_cast<C>(re));
    y[e * 2 + 1] = DNum<S>::store(static_cast<C>(im));
  }
}

Status stftDirect(KernelContext& k, std::span<const Tensor> in, std::span<const Tensor> out) {
  const auto& x = in[0].desc.dims;
  StftGeom g;
  g.batch = x[0], g.L = x[1], g.in_c = static_cast<int>(x[2]);
  g.window = hasIn(in, 2);
  g.fl = g.window ? in[2].desc.dims[0] : g.L;
  g.frames = out[0].desc.dims[1], g.bins = out[0].desc.dims[2];
  const int64_t total = g.batch * g.frames * g.bins;
  if (total == 0) return Status::ok();
  return visitDevice<kFloats>(in[0].desc.dtype, "STFT", [&](auto tag) -> Status {
    using S = typename decltype(tag)::type;
    stftKernel<S><<<blocksFor(total), kThreads, 0, streamOf(k)>>>(
        static_cast<const S*>(in[0].data), g.window ? static_cast<const S*>(in[2].data) : nullptr,
        static_cast<S*>(out[0].data), g, in[1].data, in[1].desc.dtype == DataType::kInt64,
        hasIn(in, 3) ? in[3].data : nullptr, hasIn(in, 3) && in[3].desc.dtype == DataType::kInt64,
        k.errorRecord());
    return launched("STFT");
  });
}

bool directApplies(const AttrMap&, std::span<const TensorDesc> in,
                   std::span<const TensorDesc> out) {
  // The frame length is at most the bins (full) or 2 bins - 1 (one-sided).
  return allLinear(in, out) && out[0].dims[2] <= kMaxFrame / 2;
}

}  // namespace

OPFORGE_TACTICS("ai.onnx::STFT",
                [](OpDef& d) { d.tactic(1, "cuda.direct", stftDirect, directApplies); });

}  // namespace opforge::ops
