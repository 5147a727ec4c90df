// CUDA tactic of ai.onnx::Abs: one elementwise pass (common/elementwise.cuh), the CPU reference's
// arithmetic in the compute type (float for FP16/BF16).
#include "../common/elementwise.cuh"

namespace opforge::ops {
namespace {
struct AbsF {
  template <typename C>
  __device__ C operator()(C x) const {
    if constexpr (std::is_unsigned_v<C>)
      return x;
    else
      return static_cast<C>(x < C(0) ? -x : x);
  }
};
}  // namespace

OPFORGE_TACTICS("ai.onnx::Abs", unaryTactics<kNumeric>("Abs", constant(AbsF{})));

}  // namespace opforge::ops
