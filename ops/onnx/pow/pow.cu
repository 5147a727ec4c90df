// CUDA tactic of ai.onnx::Pow: one broadcasting elementwise pass computing pow in double, as the
// reference does, then rounding to X's type.
#include <type_traits>

#include "../common/elementwise.cuh"

namespace opforge::ops {
namespace {
struct PowF {
  template <typename A, typename B>
  __device__ double operator()(A x, B y) const {
    const double r = ::pow(static_cast<double>(x), static_cast<double>(y));
    if constexpr (std::is_integral_v<A>) {
      // CUDA's pow is not correctly rounded: (-3)^1 may come out as -2.9999999999999996, which
      // truncates to -2. The reference (glibc, correctly rounded) gives exact integers there.
      const double n = ::rint(r);
      if (::fabs(r - n) <= 1e-12 * ::fmax(1.0, ::fabs(n))) return n;
    }
    return r;
  }
};

Status powCuda(KernelContext& k, std::span<const Tensor> in, std::span<const Tensor> out) {
  return visitDevice<kFloats | kSigned>(in[0].desc.dtype, "Pow", [&](auto ta) -> Status {
    using SA = typename decltype(ta)::type;
    return visitDevice<kNumeric>(in[1].desc.dtype, "Pow", [&](auto tb) -> Status {
      using SB = typename decltype(tb)::type;
      return launchBinary<SA, SB, SA>(in[0], in[1], out[0], Adapt2<SA, SB, SA, PowF>{PowF{}},
                                      streamOf(k), "Pow");
    });
  });
}
}  // namespace

OPFORGE_TACTICS("ai.onnx::Pow",
                [](OpDef& d) { d.tactic(1, "cuda.broadcast", powCuda, linearOnly); });

}  // namespace opforge::ops
