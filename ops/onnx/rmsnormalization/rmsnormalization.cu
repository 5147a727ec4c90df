// CUDA tactics of ai.onnx::RMSNormalization: a warp or a block per row (common/norm_cuda.cuh),
// y = x / sqrt(mean(x^2) + eps) * scale, scale broadcast over the normalized shape.
#include "../common/norm_cuda.cuh"

namespace opforge::ops {
namespace {
template <typename S>
struct RmsP {
  using T = NormT<S>;
  const S* scale_p;
  StridedShape<1> ps;
  bool contiguous;
  double eps;
  bool rms = true;
  __device__ T scale(int64_t, int64_t i) const {
    int64_t o = i;
    if (!contiguous) {
      int64_t q[1];
      offsetsOf<1, int64_t>(ps, i, q);
      o = q[0];
    }
    return static_cast<T>(DNum<S>::load(scale_p[o]));
  }
  __device__ T bias(int64_t, int64_t) const { return T(0); }
  __device__ void stats(int64_t, T, T) const {}
};

template <bool kBlock>
Status rmsNormCuda(KernelContext& k, std::span<const Tensor> in, std::span<const Tensor> out) {
  const Tensor& x = in[0];
  const int r = x.desc.rank();
  const int axis = wrapAxis(k.attr<int64_t>("axis"), r);
  const int64_t rows = prodOf(x.desc.dims, 0, axis), n = prodOf(x.desc.dims, axis, r);
  const std::vector<int64_t> norm(x.desc.dims.begin() + axis, x.desc.dims.end());
  return visitDevice<kFloats>(x.desc.dtype, "RMSNormalization", [&](auto tag) -> Status {
    using S = typename decltype(tag)::type;
    RmsP<S> p{};
    p.scale_p = static_cast<const S*>(in[1].data);
    p.eps = k.attr<double>("epsilon");
    p.contiguous = in[1].numel() == n;
    if (!p.contiguous && !coalesce<1>(norm, {broadcastStrides(in[1].desc.dims, norm)}, &p.ps))
      return Status::unsupported("RMSNormalization (CUDA): more than " + std::to_string(kMaxDims) +
                                 " axes");
    if (!p.contiguous && p.ps.rank == 0) p.ps.rank = 1, p.ps.dims[0] = 1, p.ps.strides[0][0] = 0;
    return launchRowNorm<S>(x.data, out[0].data, rows, n, p, kBlock, streamOf(k),
                            "RMSNormalization");
  });
}
}  // namespace

OPFORGE_TACTICS("ai.onnx::RMSNormalization", [](OpDef& d) {
  d.tactic(1, "cuda.warp", rmsNormCuda<false>, linearOnly);
  d.tactic(2, "cuda.block", rmsNormCuda<true>, linearOnly);
});

}  // namespace opforge::ops
