// CUDA tactic of ai.onnx::Sign: one elementwise pass (common/elementwise.cuh), the CPU reference's
// arithmetic in the compute type (float for FP16/BF16).
#include "../common/elementwise.cuh"

namespace opforge::ops {
namespace {
struct SignF {
  template <typename C>
  __device__ C operator()(C x) const {
    if (dm::isnan(x)) return x;
    if constexpr (std::is_unsigned_v<C>)
      return static_cast<C>(x != C(0) ? 1 : 0);
    else
      return static_cast<C>((C(0) < x) - (x < C(0)));
  }
};
}  // namespace

OPFORGE_TACTICS("ai.onnx::Sign", unaryTactics<kNumeric>("Sign", constant(SignF{})));

}  // namespace opforge::ops
