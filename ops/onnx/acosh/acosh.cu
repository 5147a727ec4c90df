// CUDA tactic of ai.onnx::Acosh: one elementwise pass (common/elementwise.cuh), the CPU reference's
// arithmetic in the compute type (float for FP16/BF16).
#include "../common/elementwise.cuh"

namespace opforge::ops {
namespace {
struct AcoshF {
  template <typename C>
  __device__ C operator()(C x) const {
    return static_cast<C>(dm::acosh(x));
  }
};
}  // namespace

OPFORGE_TACTICS("ai.onnx::Acosh", unaryTactics<kFloats>("Acosh", constant(AcoshF{})));

}  // namespace opforge::ops
