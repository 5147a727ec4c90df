// CUDA tactic of ai.onnx::LRN, cuda.direct: a thread per element sums the squares of its channel
// window in double (neighbouring threads share the window's loads through the cache) and divides
// by (bias + alpha / size * sum)^beta in double, as the reference.
#include "../common/cuda_common.cuh"

namespace opforge::ops {
namespace {

struct Geom {
  int64_t n, ch, sp, lo, hi;
  double alpha_over_size, beta, bias;
};

template <typename S>
__global__ void __launch_bounds__(kThreads)
    lrnKernel(const S* __restrict__ x, S* __restrict__ y, Geom g) {
  const int64_t total = g.n * g.ch * g.sp, stride = int64_t(gridDim.x) * blockDim.x;
  for (int64_t t = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; t < total; t += stride) {
    const int64_t i = t % g.sp, c = (t / g.sp) % g.ch, b = t / (g.sp * g.ch);
    const int64_t from = c - g.lo < 0 ? 0 : c - g.lo,
                  to = c + g.hi > g.ch - 1 ? g.ch - 1 : c + g.hi;
    double sum = 0;
    for (int64_t j = from; j <= to; ++j) {
      const double v = static_cast<double>(DNum<S>::load(x[(b * g.ch + j) * g.sp + i]));
      sum += v * v;
    }
    const double d = pow(g.bias + g.alpha_over_size * sum, g.beta);
    y[t] = DNum<S>::store(
        static_cast<typename DNum<S>::C>(static_cast<double>(DNum<S>::load(x[t])) / d));
  }
}

Status lrnCuda(KernelContext& k, std::span<const Tensor> in, std::span<const Tensor> out) {
  const auto& d = in[0].desc;
  const int64_t size = k.attr<int64_t>("size");
  Geom g{d.dims[0],
         d.dims[1],
         prodOf(d.dims, 2, d.rank()),
         (size - 1) / 2,
         0,
         k.attr<double>("alpha") / static_cast<double>(size),
         k.attr<double>("beta"),
         k.attr<double>("bias")};
  g.hi = size - 1 - g.lo;
  const int64_t total = d.numel();
  if (total == 0) return Status::ok();
  return visitDevice<kFloats>(d.dtype, "LRN", [&](auto tag) -> Status {
    using S = typename decltype(tag)::type;
    lrnKernel<S><<<blocksFor(total), kThreads, 0, streamOf(k)>>>(static_cast<const S*>(in[0].data),
                                                                 static_cast<S*>(out[0].data), g);
    return launched("LRN");
  });
}
}  // namespace

OPFORGE_TACTICS("ai.onnx::LRN", [](OpDef& d) { d.tactic(1, "cuda.direct", lrnCuda, linearOnly); });

}  // namespace opforge::ops
