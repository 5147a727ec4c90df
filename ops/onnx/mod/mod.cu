// CUDA tactic of ai.onnx::Mod: one broadcasting elementwise pass; integer divisors are scanned for
// zeros first (a run-time error, opforge/device_error.h).
#include "../common/elementwise.cuh"

namespace opforge::ops {
namespace {
struct ModF {
  bool fmod_;
  template <typename C>
  __device__ C operator()(C x, C y) const {
    if constexpr (std::is_floating_point_v<C>) {
      return fmod_ ? dm::fmod(x, y) : dm::floorMod(x, y);
    } else if constexpr (std::is_unsigned_v<C>) {
      return y == C(0) ? C(0) : static_cast<C>(x % y);
    } else {
      if (y == C(0) || y == C(-1)) return C(0);  // no INT_MIN % -1 trap
      C r = static_cast<C>(x % y);
      if (!fmod_ && r != 0 && ((r < 0) != (y < 0))) r = static_cast<C>(r + y);
      return r;
    }
  }
};

Status modCuda(KernelContext& k, std::span<const Tensor> in, std::span<const Tensor> out) {
  const ModF f{k.attr<int64_t>("fmod") != 0};
  return visitDevice<kNumeric>(in[0].desc.dtype, "Mod", [&](auto tag) -> Status {
    using S = typename decltype(tag)::type;
    if constexpr (std::is_integral_v<S>)
      OPFORGE_RETURN_IF_ERROR(checkNoZero<S>(in[1], k.errorRecord(), 1, streamOf(k), "Mod"));
    return launchBinary<S, S, S>(in[0], in[1], out[0], Adapt2<S, S, S, ModF>{f}, streamOf(k),
                                 "Mod");
  });
}
}  // namespace

OPFORGE_TACTICS("ai.onnx::Mod",
                [](OpDef& d) { d.tactic(1, "cuda.broadcast", modCuda, linearOnly); });

}  // namespace opforge::ops
