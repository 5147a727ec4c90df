// CUDA tactic of ai.onnx::QuantizeLinear: one thread per element, the same FP32 quotient (FP64 for
// FP64 inputs), round half to even and saturation as the CPU reference.
#include <limits>

#include "../common/cuda_common.cuh"
#include "../common/quantize.h"

namespace opforge::ops {
namespace {
template <typename X, typename S, typename Q, typename W>
__global__ void __launch_bounds__(kThreads)
    quantizeKernel(const X* __restrict__ x, const S* __restrict__ s, const Q* __restrict__ zp,
                   Q* __restrict__ y, QuantLayout q, int64_t total) {
  const int64_t stride = int64_t(gridDim.x) * blockDim.x;
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < total; i += stride) {
    const int64_t r = i % q.inner, t = i / q.inner, a = t % q.n, o = t / q.n;
    const int64_t si = o * q.so + (a / q.bs) * q.sa + r * q.si;
    const W v = static_cast<W>(DNum<X>::load(x[i]));
    const W sc = static_cast<W>(DNum<S>::load(s[si]));
    const double d = static_cast<double>(rint(v / sc));
    double z = isnan(d) ? 0.0 : d + (zp ? static_cast<double>(zp[si]) : 0.0);
    z = fmin(static_cast<double>(std::numeric_limits<Q>::max()),
             fmax(static_cast<double>(std::numeric_limits<Q>::min()), z));
    y[i] = static_cast<Q>(z);
  }
}

Status quantizeCuda(KernelContext& k, std::span<const Tensor> in, std::span<const Tensor> out) {
  const Tensor &x = in[0], &s = in[1], &y = out[0];
  const int64_t total = y.numel();
  if (total == 0) return Status::ok();
  const QuantLayout q =
      quantLayout(x.desc, s.desc, k.attr<int64_t>("axis"), k.attr<int64_t>("block_size"));
  const void* zp = present(in, 2) ? in[2].data : nullptr;
  return visitDevice<kFloats | kI32>(x.desc.dtype, "QuantizeLinear", [&](auto xt) -> Status {
    using X = typename decltype(xt)::type;
    using W = std::conditional_t<std::is_same_v<X, double>, double, float>;
    return visitDevice<kFloats>(s.desc.dtype, "QuantizeLinear", [&](auto st) -> Status {
      using S = typename decltype(st)::type;
      return visitDevice<kQuantTypes>(y.desc.dtype, "QuantizeLinear", [&](auto yt) -> Status {
        using Q = typename decltype(yt)::type;
        quantizeKernel<X, S, Q, W><<<blocksFor(total), kThreads, 0, streamOf(k)>>>(
            static_cast<const X*>(x.data), static_cast<const S*>(s.data), static_cast<const Q*>(zp),
            static_cast<Q*>(y.data), q, total);
        return launched("QuantizeLinear");
      });
    });
  });
}
}  // namespace

OPFORGE_TACTICS("ai.onnx::QuantizeLinear", [](OpDef& d) {
  d.tactic(1, "cuda.elementwise", quantizeCuda,
           [](const AttrMap& a, std::span<const TensorDesc> in, std::span<const TensorDesc> out) {
             // FP8 data only on the CPU
             return linearOnly(a, in, out) && !inTypeSet(in[0].dtype, kFp8) &&
                    !inTypeSet(out[0].dtype, kFp8);
           });
});

}  // namespace opforge::ops
