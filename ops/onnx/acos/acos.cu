// CUDA tactic of ai.onnx::Acos: one elementwise pass (common/elementwise.cuh), the CPU reference's
// arithmetic in the compute type (float for FP16/BF16).
#include "../common/elementwise.cuh"

namespace opforge::ops {
namespace {
struct AcosF {
  template <typename C>
  __device__ C operator()(C x) const {
    return static_cast<C>(dm::acos(x));
  }
};
}  // namespace

OPFORGE_TACTICS("ai.onnx::Acos", unaryTactics<kFloats>("Acos", constant(AcosF{})));

}  // namespace opforge::ops
