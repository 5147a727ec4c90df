// CUDA tactic of ai.onnx::Exp: one elementwise pass (common/elementwise.cuh), the CPU reference's
// arithmetic in the compute type (float for FP16/BF16).
#include "../common/elementwise.cuh"

namespace opforge::ops {
namespace {
struct ExpF {
  template <typename C>
  __device__ C operator()(C x) const {
    return static_cast<C>(dm::exp(x));
  }
};
}  // namespace

OPFORGE_TACTICS("ai.onnx::Exp", unaryTactics<kFloats>("Exp", constant(ExpF{})));

}  // namespace opforge::ops
