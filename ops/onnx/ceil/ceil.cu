// CUDA tactic of ai.onnx::Ceil: one elementwise pass (common/elementwise.cuh), the CPU reference's
// arithmetic in the compute type (float for FP16/BF16).
#include "../common/elementwise.cuh"

namespace opforge::ops {
namespace {
struct CeilF {
  template <typename C>
  __device__ C operator()(C x) const {
    return static_cast<C>(dm::ceil(x));
  }
};
}  // namespace

OPFORGE_TACTICS("ai.onnx::Ceil", unaryTactics<kFloats>("Ceil", constant(CeilF{})));

}  // namespace opforge::ops
