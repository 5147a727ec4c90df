// CUDA tactic of ai.onnx::BatchNormalization (inference): a per-channel kernel computes
// a = scale / sqrt(var + eps) and b = B - mean * a in double (the statistics may have any float
// type), then one elementwise pass y = x * a[c] + b[c], in double like the reference.
#include "../common/norm_cuda.cuh"

namespace opforge::ops {
namespace {
__global__ void bnPrepKernel(const void* scale, int ts, const void* bias, int tb, const void* mean,
                             int tm, const void* var, int tv, int64_t ch, double eps, double* ab) {
  for (int64_t c = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; c < ch;
       c += int64_t(gridDim.x) * blockDim.x) {
    const double a = loadFloatAny(scale, ts, c) / ::sqrt(loadFloatAny(var, tv, c) + eps);
    ab[2 * c] = a;
    ab[2 * c + 1] = loadFloatAny(bias, tb, c) - loadFloatAny(mean, tm, c) * a;
  }
}

template <typename S>
__global__ void __launch_bounds__(kThreads)
    bnApplyKernel(const S* __restrict__ x, S* __restrict__ y, const double* __restrict__ ab,
                  int64_t n, int64_t ch, int64_t sp) {
  const int64_t stride = int64_t(gridDim.x) * blockDim.x;
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) {
    const int64_t c = (i / sp) % ch;
    const double v = static_cast<double>(DNum<S>::load(x[i])) * ab[2 * c] + ab[2 * c + 1];
    y[i] = DNum<S>::store(static_cast<typename DNum<S>::C>(v));
  }
}

Status bnCuda(KernelContext& k, std::span<const Tensor> in, std::span<const Tensor> out) {
  const Tensor& x = in[0];
  const int64_t ch = x.desc.dims[1],
                sp = std::max<int64_t>(prodOf(x.desc.dims, 2, x.desc.rank()), 1);
  if (x.numel() == 0) return Status::ok();
  auto* ab = static_cast<double*>(k.workspace());
  cudaStream_t st = streamOf(k);
  auto t = [&](int i) { return static_cast<int>(in[i].desc.dtype); };
  bnPrepKernel<<<blocksFor(ch), kThreads, 0, st>>>(in[1].data, t(1), in[2].data, t(2), in[3].data,
                                                   t(3), in[4].data, t(4), ch,
                                                   k.attr<double>("epsilon"), ab);
  OPFORGE_RETURN_IF_ERROR(launched("BatchNormalization"));
  return visitDevice<kFloats>(x.desc.dtype, "BatchNormalization", [&](auto tag) -> Status {
    using S = typename decltype(tag)::type;
    bnApplyKernel<S><<<blocksFor(x.numel()), kThreads, 0, st>>>(
        static_cast<const S*>(x.data), static_cast<S*>(out[0].data), ab, x.numel(), ch, sp);
    return launched("BatchNormalization");
  });
}
}  // namespace

OPFORGE_TACTICS("ai.onnx::BatchNormalization", [](OpDef& d) {
  d.tactic(
      1, "cuda.affine", bnCuda, linearOnly,
      [](const AttrMap&, std::span<const TensorDesc> in, std::span<const TensorDesc>) -> size_t {
        return sizeof(double) * 2 * static_cast<size_t>(std::max<int64_t>(in[0].dims[1], 1));
      });
});

}  // namespace opforge::ops
