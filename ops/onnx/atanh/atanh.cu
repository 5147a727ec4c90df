// CUDA tactic of ai.onnx::Atanh: one elementwise pass (common/elementwise.cuh), the CPU reference's
// arithmetic in the compute type (float for FP16/BF16).
#include "../common/elementwise.cuh"

namespace opforge::ops {
namespace {
struct AtanhF {
  template <typename C>
  __device__ C operator()(C x) const {
    return static_cast<C>(dm::atanh(x));
  }
};
}  // namespace

OPFORGE_TACTICS("ai.onnx::Atanh", unaryTactics<kFloats>("Atanh", constant(AtanhF{})));

}  // namespace opforge::ops
