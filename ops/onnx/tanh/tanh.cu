// CUDA tactic of ai.onnx::Tanh: one elementwise pass (common/elementwise.cuh), the CPU reference's
// arithmetic in the compute type (float for FP16/BF16).
#include "../common/elementwise.cuh"

namespace opforge::ops {
namespace {
struct TanhF {
  template <typename C>
  __device__ C operator()(C x) const {
    return static_cast<C>(dm::tanh(x));
  }
};
}  // namespace

OPFORGE_TACTICS("ai.onnx::Tanh", unaryTactics<kFloats>("Tanh", constant(TanhF{})));

}  // namespace opforge::ops
