// CUDA tactic of ai.onnx::Erf: one elementwise pass (common/elementwise.cuh), the CPU reference's
// arithmetic in the compute type (float for FP16/BF16).
#include "../common/elementwise.cuh"

namespace opforge::ops {
namespace {
struct ErfF {
  template <typename C>
  __device__ C operator()(C x) const {
    return static_cast<C>(dm::erf(x));
  }
};
}  // namespace

OPFORGE_TACTICS("ai.onnx::Erf", unaryTactics<kFloats>("Erf", constant(ErfF{})));

}  // namespace opforge::ops
