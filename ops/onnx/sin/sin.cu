// CUDA tactic of ai.onnx::Sin: one elementwise pass (common/elementwise.cuh), the CPU reference's
// arithmetic in the compute type (float for FP16/BF16).
#include "../common/elementwise.cuh"

namespace opforge::ops {
namespace {
struct SinF {
  template <typename C>
  __device__ C operator()(C x) const {
    return static_cast<C>(dm::sin(x));
  }
};
}  // namespace

OPFORGE_TACTICS("ai.onnx::Sin", unaryTactics<kFloats>("Sin", constant(SinF{})));

}  // namespace opforge::ops
