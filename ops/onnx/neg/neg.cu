// CUDA tactic of ai.onnx::Neg: one elementwise pass (common/elementwise.cuh), the CPU reference's
// arithmetic in the compute type (float for FP16/BF16).
#include "../common/elementwise.cuh"

namespace opforge::ops {
namespace {
struct NegF {
  template <typename C>
  __device__ C operator()(C x) const {
    if constexpr (std::is_integral_v<C>)
      return static_cast<C>(0 - static_cast<std::make_unsigned_t<C>>(x));
    else
      return -x;
  }
};
}  // namespace

OPFORGE_TACTICS("ai.onnx::Neg", unaryTactics<kFloats | kSigned>("Neg", constant(NegF{})));

}  // namespace opforge::ops
