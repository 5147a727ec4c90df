// CUDA tactics of ai.onnx::InstanceNormalization: a warp or a block per (n, c) plane
// (common/norm_cuda.cuh), scale and B per channel.
#include "../common/norm_cuda.cuh"

namespace opforge::ops {
namespace {
template <typename S>
struct InstanceP {
  using T = NormT<S>;
  const S* scale_p;
  const S* bias_p;
  int64_t channels;
  double eps;
  bool rms = false;
  __device__ T scale(int64_t r, int64_t) const {
    return static_cast<T>(DNum<S>::load(scale_p[r % channels]));
  }
  __device__ T bias(int64_t r, int64_t) const {
    return static_cast<T>(DNum<S>::load(bias_p[r % channels]));
  }
  __device__ void stats(int64_t, T, T) const {}
};

template <bool kBlock>
Status instanceNormCuda(KernelContext& k, std::span<const Tensor> in, std::span<const Tensor> out) {
  const Tensor& x = in[0];
  const int64_t ch = x.desc.dims[1], rows = x.desc.dims[0] * ch,
                n = prodOf(x.desc.dims, 2, x.desc.rank());
  return visitDevice<kFloats>(x.desc.dtype, "InstanceNormalization", [&](auto tag) -> Status {
    using S = typename decltype(tag)::type;
    InstanceP<S> p{static_cast<const S*>(in[1].data), static_cast<const S*>(in[2].data), ch,
                   k.attr<double>("epsilon")};
    return launchRowNorm<S>(x.data, out[0].data, rows, n, p, kBlock, streamOf(k),
                            "InstanceNormalization");
  });
}
}  // namespace

OPFORGE_TACTICS("ai.onnx::InstanceNormalization", [](OpDef& d) {
  d.tactic(1, "cuda.warp", instanceNormCuda<false>, linearOnly);
  d.tactic(2, "cuda.block", instanceNormCuda<true>, linearOnly);
});

}  // namespace opforge::ops
