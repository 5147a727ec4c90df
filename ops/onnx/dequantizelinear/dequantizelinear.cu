// CUDA tactic of ai.onnx::DequantizeLinear: one thread per element, (x - zp) * scale in FP32
// (FP64 for an FP64 scale) as the CPU reference.
#include "../common/cuda_common.cuh"
#include "../common/quantize.h"

namespace opforge::ops {
namespace {
template <typename Q, typename S>
__global__ void __launch_bounds__(kThreads)
    dequantizeKernel(const Q* __restrict__ x, const S* __restrict__ s, const Q* __restrict__ zp,
                     S* __restrict__ y, QuantLayout q, int64_t total) {
  using C = typename DNum<S>::C;
  const int64_t stride = int64_t(gridDim.x) * blockDim.x;
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < total; i += stride) {
    const int64_t r = i % q.inner, t = i / q.inner, a = t % q.n, o = t / q.n;
    const int64_t si = o * q.so + (a / q.bs) * q.sa + r * q.si;
    const C diff = static_cast<C>(x[i]) - (zp ? static_cast<C>(zp[si]) : C(0));
    volatile C held = diff;  // no fused multiply-add: the reference rounds the difference first
    y[i] = DNum<S>::store(held * static_cast<C>(DNum<S>::load(s[si])));
  }
}

Status dequantizeCuda(KernelContext& k, std::span<const Tensor> in, std::span<const Tensor> out) {
  const Tensor &x = in[0], &s = in[1], &y = out[0];
  const int64_t total = y.numel();
  if (total == 0) return Status::ok();
  const QuantLayout q =
      quantLayout(x.desc, s.desc, k.attr<int64_t>("axis"), k.attr<int64_t>("block_size"));
  const void* zp = present(in, 2) ? in[2].data : nullptr;
  return visitDevice<kQuantTypes | kI32>(x.desc.dtype, "DequantizeLinear", [&](auto xt) -> Status {
    using Q = typename decltype(xt)::type;
    return visitDevice<kFloats>(s.desc.dtype, "DequantizeLinear", [&](auto st) -> Status {
      using S = typename decltype(st)::type;
      dequantizeKernel<Q, S><<<blocksFor(total), kThreads, 0, streamOf(k)>>>(
          static_cast<const Q*>(x.data), static_cast<const S*>(s.data), static_cast<const Q*>(zp),
          static_cast<S*>(y.data), q, total);
      return launched("DequantizeLinear");
    });
  });
}
}  // namespace

OPFORGE_TACTICS("ai.onnx::DequantizeLinear", [](OpDef& d) {
  d.tactic(1, "cuda.elementwise", dequantizeCuda,
           [](const AttrMap& a, std::span<const TensorDesc> in, std::span<const TensorDesc> out) {
             // FP8 data only on the CPU
             return linearOnly(a, in, out) && !inTypeSet(in[0].dtype, kFp8) &&
                    !inTypeSet(out[0].dtype, kFp8);
           });
});

}  // namespace opforge::ops
