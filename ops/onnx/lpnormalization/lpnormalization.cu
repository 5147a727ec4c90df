// CUDA tactic of ai.onnx::LpNormalization, cuda.line: a thread per line along the axis (adjacent
// threads take adjacent lines, so the loads coalesce when the axis is not the innermost) sums |x|
// or x^2 in double and writes x / norm (0 where the norm is 0), as the reference.
#include "../common/cuda_common.cuh"

namespace opforge::ops {
namespace {

template <typename S>
__global__ void __launch_bounds__(kThreads)
    lpNormKernel(const S* __restrict__ x, S* __restrict__ y, int64_t outer, int64_t n,
                 int64_t inner, bool l1) {
  const int64_t lines = outer * inner, stride = int64_t(gridDim.x) * blockDim.x;
  for (int64_t l = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; l < lines; l += stride) {
    const int64_t o = l / inner, i = l - o * inner, base = o * n * inner + i;
    double sum = 0;
    for (int64_t j = 0; j < n; ++j) {
      const double v = static_cast<double>(DNum<S>::load(x[base + j * inner]));
      sum += l1 ? fabs(v) : v * v;
    }
    const double norm = l1 ? sum : sqrt(sum);
    for (int64_t j = 0; j < n; ++j) {
      const double v = static_cast<double>(DNum<S>::load(x[base + j * inner]));
      y[base + j * inner] =
          DNum<S>::store(static_cast<typename DNum<S>::C>(norm == 0 ? 0.0 : v / norm));
    }
  }
}

Status lpNormCuda(KernelContext& k, std::span<const Tensor> in, std::span<const Tensor> out) {
  const auto& d = in[0].desc;
  const int r = d.rank();
  const int axis = wrapAxis(k.attr<int64_t>("axis"), r);
  const int64_t outer = prodOf(d.dims, 0, axis), n = d.dims[axis],
                inner = prodOf(d.dims, axis + 1, r);
  if (d.numel() == 0) return Status::ok();
  return visitDevice<kFloats>(d.dtype, "LpNormalization", [&](auto tag) -> Status {
    using S = typename decltype(tag)::type;
    lpNormKernel<S><<<blocksFor(outer * inner), kThreads, 0, streamOf(k)>>>(
        static_cast<const S*>(in[0].data), static_cast<S*>(out[0].data), outer, n, inner,
        k.attr<int64_t>("p") == 1);
    return launched("LpNormalization");
  });
}
}  // namespace

OPFORGE_TACTICS("ai.onnx::LpNormalization",
                [](OpDef& d) { d.tactic(1, "cuda.line", lpNormCuda, linearOnly); });

}  // namespace opforge::ops
