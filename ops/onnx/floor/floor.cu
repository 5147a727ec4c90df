// CUDA tactic of ai.onnx::Floor: one elementwise pass (common/elementwise.cuh), the CPU reference's
// arithmetic in the compute type (float for FP16/BF16).
#include "../common/elementwise.cuh"

namespace opforge::ops {
namespace {
struct FloorF {
  template <typename C>
  __device__ C operator()(C x) const {
    return static_cast<C>(dm::floor(x));
  }
};
}  // namespace

OPFORGE_TACTICS("ai.onnx::Floor", unaryTactics<kFloats>("Floor", constant(FloorF{})));

}  // namespace opforge::ops
