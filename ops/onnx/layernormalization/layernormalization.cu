// CUDA tactics of ai.onnx::LayerNormalization: a warp or a block per row (common/norm_cuda.cuh);
// Scale and B broadcast over the normalized shape; the optional Mean / InvStdDev outputs written
// when the node lists them.
#include "../common/norm_cuda.cuh"

namespace opforge::ops {
namespace {
template <typename S>
struct LayerNormP {
  using T = NormT<S>;
  const S* scale_p;
  const S* bias_p;
  S* mean_out;
  S* inv_out;
  StridedShape<2> pb;  // offsets of scale (0) and bias (1) over the normalized shape
  bool contiguous;     // both offsets are the position itself
  double eps;
  bool rms = false;
  __device__ int64_t off(int64_t i, int which) const {
    if (contiguous) return i;
    int64_t o[2];
    offsetsOf<2, int64_t>(pb, i, o);
    return o[which];
  }
  __device__ T scale(int64_t, int64_t i) const { return static_cast<T>(DNum<S>::load(scale_p[off(i, 0)])); }
  __device__ T bias(int64_t, int64_t i) const {
    return bias_p ? static_cast<T>(DNum<S>::load(bias_p[off(i, 1)])) : T(0);
  }
  __device__ void stats(int64_t r, T mean, T inv) const {
    if (mean_out) mean_out[r] = DNum<S>::store(static_cast<typename DNum<S>::C>(mean));
    if (inv_out) inv_out[r] = DNum<S>::store(static_cast<typename DNum<S>::C>(inv));
  }
};

template <bool kBlock>
Status layerNormCuda(KernelContext& k, std::span<const Tensor> in, std::span<const Tensor> out) {
  const Tensor& x = in[0];
  const int r = x.desc.rank();
  const int axis = wrapAxis(k.attr<int64_t>("axis"), r);
  const int64_t rows = prodOf(x.desc.dims, 0, axis), n = prodOf(x.desc.dims, axis, r);
  const std::vector<int64_t> norm(x.desc.dims.begin() + axis, x.desc.dims.end());
  const bool has_b = hasIn(in, 2);
  return visitDevice<kFloats>(x.desc.dtype, "LayerNormalization", [&](auto tag) -> Status {
    using S = typename decltype(tag)::type;
    LayerNormP<S> p{};
    p.scale_p = static_cast<const S*>(in[1].data);
    p.bias_p = has_b ? static_cast<const S*>(in[2].data) : nullptr;
    p.mean_out = out.size() > 1 && out[1].numel() > 0 ? static_cast<S*>(out[1].data) : nullptr;
    p.inv_out = out.size() > 2 && out[2].numel() > 0 ? static_cast<S*>(out[2].data) : nullptr;
    p.eps = k.attr<double>("epsilon");
    p.contiguous = in[1].numel() == n && (!has_b || in[2].numel() == n);
    if (!p.contiguous &&
        !coalesce<2>(norm, {broadcastStrides(in[1].desc.dims, norm),
                            has_b ? broadcastStrides(in[2].desc.dims, norm) : std::vector<int64_t>(norm.size(), 0)},
                     &p.pb))
      return Status::unsupported("LayerNormalization (CUDA): more than " + std::to_string(kMaxDims) + " axes");
    if (!p.contiguous && p.pb.rank == 0) p.pb.rank = 1, p.pb.dims[0] = 1, p.pb.strides[0][0] = p.pb.strides[1][0] = 0;
    return launchRowNorm<S>(x.data, out[0].data, rows, n, p, kBlock, streamOf(k), "LayerNormalization");
  });
}
}  // namespace

OPFORGE_TACTICS("ai.onnx::LayerNormalization", [](OpDef& d) {
  d.tactic(1, "cuda.warp", layerNormCuda<false>, linearOnly);
  d.tactic(2, "cuda.block", layerNormCuda<true>, linearOnly);
});

}  // namespace opforge::ops
