// CUDA tactic of ai.onnx::Pow: one broadcasting elementwise pass computing pow in double, as the
// reference does, then rounding to X's type.
#include "../common/elementwise.cuh"

namespace opforge::ops {
namespace {
struct PowF {
  template <typename A, typename B>
  __device__ double operator()(A x, B y) const {
    return ::pow(static_cast<double>(x), static_cast<double>(y));
  }
};

Status powCuda(KernelContext& k, std::span<const Tensor> in, std::span<const Tensor> out) {
  return visitDevice<kFloats | kSigned>(in[0].desc.dtype, "Pow", [&](auto ta) -> Status {
    using SA = typename decltype(ta)::type;
    return visitDevice<kNumeric>(in[1].desc.dtype, "Pow", [&](auto tb) -> Status {
      using SB = typename decltype(tb)::type;
      return launchBinary<SA, SB, SA>(in[0], in[1], out[0], Adapt2<SA, SB, SA, PowF>{PowF{}}, streamOf(k), "Pow");
    });
  });
}
}  // namespace

OPFORGE_TACTICS("ai.onnx::Pow", [](OpDef& d) { d.tactic(1, "cuda.broadcast", powCuda, linearOnly); });

}  // namespace opforge::ops
