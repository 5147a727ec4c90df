// CUDA tactic of ai.onnx::Clip: clamp to [min, max] in one pass; the bounds are read on the
// device from the optional scalar inputs (else the attributes, else the type's range).
#include "../common/elementwise.cuh"

namespace opforge::ops {
namespace {
template <typename S>
struct ClipF {
  using C = typename DNum<S>::C;
  const S* lo_p;
  const S* hi_p;
  C lo, hi;
  __device__ __forceinline__ S operator()(S xs) const {
    const C l = lo_p ? DNum<S>::load(*lo_p) : lo, h = hi_p ? DNum<S>::load(*hi_p) : hi;
    C v = DNum<S>::load(xs);
    if (v < l) v = l;
    if (v > h) v = h;
    return DNum<S>::store(v);
  }
};

Status clipCuda(KernelContext& k, std::span<const Tensor> in, std::span<const Tensor> out) {
  return visitDevice<kNumeric>(in[0].desc.dtype, "Clip", [&](auto tag) -> Status {
    using S = typename decltype(tag)::type;
    using C = typename DNum<S>::C;
    ClipF<S> f{nullptr, nullptr, std::numeric_limits<C>::lowest(), std::numeric_limits<C>::max()};
    if constexpr (std::is_floating_point_v<C>) {
      f.lo = -std::numeric_limits<C>::infinity();
      f.hi = std::numeric_limits<C>::infinity();
    }
    if (k.attrs().has("min")) f.lo = static_cast<C>(k.attr<double>("min"));
    if (k.attrs().has("max")) f.hi = static_cast<C>(k.attr<double>("max"));
    if (hasIn(in, 1) && in[1].numel() == 1) f.lo_p = static_cast<const S*>(in[1].data);
    if (hasIn(in, 2) && in[2].numel() == 1) f.hi_p = static_cast<const S*>(in[2].data);
    return launchMap1<S, S>(in[0].data, out[0].data, out[0].numel(), f, streamOf(k), "Clip");
  });
}
}  // namespace

OPFORGE_TACTICS("ai.onnx::Clip", [](OpDef& d) { d.tactic(1, "cuda.map", clipCuda, linearOnly); });

}  // namespace opforge::ops
