// CUDA tactic of ai.onnx::Tan: one elementwise pass (common/elementwise.cuh), the CPU reference's
// arithmetic in the compute type (float for FP16/BF16).
#include "../common/elementwise.cuh"

namespace opforge::ops {
namespace {
struct TanF {
  template <typename C>
  __device__ C operator()(C x) const {
    return static_cast<C>(dm::tan(x));
  }
};
}  // namespace

OPFORGE_TACTICS("ai.onnx::Tan", unaryTactics<kFloats>("Tan", constant(TanF{})));

}  // namespace opforge::ops
