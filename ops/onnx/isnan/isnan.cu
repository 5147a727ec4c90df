// CUDA tactic of ai.onnx::IsNaN: one elementwise pass (common/elementwise.cuh), the CPU reference's
// arithmetic in the compute type (float for FP16/BF16).
#include "../common/elementwise.cuh"

namespace opforge::ops {
namespace {
struct IsNaNF {
  template <typename C>
  __device__ bool operator()(C x) const {
    return dm::isnan(x);
  }
};
}  // namespace

OPFORGE_TACTICS("ai.onnx::IsNaN", unaryTactics<kFloats, true>("IsNaN", constant(IsNaNF{})));

}  // namespace opforge::ops
