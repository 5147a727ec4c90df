// CUDA tactic of ai.onnx::Round: one elementwise pass (common/elementwise.cuh), the CPU reference's
// arithmetic in the compute type (float for FP16/BF16).
#include "../common/elementwise.cuh"

namespace opforge::ops {
namespace {
struct RoundF {
  template <typename C>
  __device__ C operator()(C x) const {
    return static_cast<C>(dm::rint(x));
  }
};
}  // namespace

OPFORGE_TACTICS("ai.onnx::Round", unaryTactics<kFloats>("Round", constant(RoundF{})));

}  // namespace opforge::ops
