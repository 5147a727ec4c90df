// CUDA tactic of ai.onnx::Asin: one elementwise pass (common/elementwise.cuh), the CPU reference's
// arithmetic in the compute type (float for FP16/BF16).
#include "../common/elementwise.cuh"

namespace opforge::ops {
namespace {
struct AsinF {
  template <typename C>
  __device__ C operator()(C x) const {
    return static_cast<C>(dm::asin(x));
  }
};
}  // namespace

OPFORGE_TACTICS("ai.onnx::Asin", unaryTactics<kFloats>("Asin", constant(AsinF{})));

}  // namespace opforge::ops
