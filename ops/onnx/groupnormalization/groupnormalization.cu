// CUDA tactics of ai.onnx::GroupNormalization: a warp or a block per (n, group) over its channels
// and spatial positions (common/norm_cuda.cuh); scale and bias per channel (opset 21) or per group
// (opset 18), told apart by size as in the reference.
#include "../common/norm_cuda.cuh"

namespace opforge::ops {
namespace {
template <typename S>
struct GroupP {
  using T = NormT<S>;
  const S* scale_p;
  const S* bias_p;
  int64_t groups, cg, sp;
  bool per_channel;
  double eps;
  bool rms = false;
  __device__ int64_t idx(int64_t r, int64_t i) const {
    return per_channel ? (r % groups) * cg + i / sp : r % groups;
  }
  __device__ T scale(int64_t r, int64_t i) const {
    return static_cast<T>(DNum<S>::load(scale_p[idx(r, i)]));
  }
  __device__ T bias(int64_t r, int64_t i) const {
    return static_cast<T>(DNum<S>::load(bias_p[idx(r, i)]));
  }
  __device__ void stats(int64_t, T, T) const {}
};

template <bool kBlock>
Status groupNormCuda(KernelContext& k, std::span<const Tensor> in, std::span<const Tensor> out) {
  const Tensor& x = in[0];
  const int64_t g = k.attr<int64_t>("num_groups");
  const int64_t ch = x.desc.dims[1], sp = prodOf(x.desc.dims, 2, x.desc.rank());
  if (ch % g != 0)
    return Status::invalid("channel count " + std::to_string(ch) + " not divisible by num_groups");
  const int64_t cg = ch / g;
  return visitDevice<kFloats>(x.desc.dtype, "GroupNormalization", [&](auto tag) -> Status {
    using S = typename decltype(tag)::type;
    GroupP<S> p{static_cast<const S*>(in[1].data),
                static_cast<const S*>(in[2].data),
                g,
                cg,
                std::max<int64_t>(sp, 1),
                in[1].numel() == ch,
                k.attr<double>("epsilon")};
    return launchRowNorm<S>(x.data, out[0].data, x.desc.dims[0] * g, cg * sp, p, kBlock,
                            streamOf(k), "GroupNormalization");
  });
}
}  // namespace

OPFORGE_TACTICS("ai.onnx::GroupNormalization", [](OpDef& d) {
  d.tactic(1, "cuda.warp", groupNormCuda<false>, linearOnly);
  d.tactic(2, "cuda.block", groupNormCuda<true>, linearOnly);
});

}  // namespace opforge::ops
