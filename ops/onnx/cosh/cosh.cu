// CUDA tactic of ai.onnx::Cosh: one elementwise pass (common/elementwise.cuh), the CPU reference's
// arithmetic in the compute type (float for FP16/BF16).
#include "../common/elementwise.cuh"

namespace opforge::ops {
namespace {
struct CoshF {
  template <typename C>
  __device__ C operator()(C x) const {
    return static_cast<C>(dm::cosh(x));
  }
};
}  // namespace

OPFORGE_TACTICS("ai.onnx::Cosh", unaryTactics<kFloats>("Cosh", constant(CoshF{})));

}  // namespace opforge::ops
