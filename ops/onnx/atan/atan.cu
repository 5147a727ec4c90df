// CUDA tactic of ai.onnx::Atan: one elementwise pass (common/elementwise.cuh), the CPU reference's
// arithmetic in the compute type (float for FP16/BF16).
#include "../common/elementwise.cuh"

namespace opforge::ops {
namespace {
struct AtanF {
  template <typename C>
  __device__ C operator()(C x) const {
    return static_cast<C>(dm::atan(x));
  }
};
}  // namespace

OPFORGE_TACTICS("ai.onnx::Atan", unaryTactics<kFloats>("Atan", constant(AtanF{})));

}  // namespace opforge::ops
