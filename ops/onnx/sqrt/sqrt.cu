// CUDA tactic of ai.onnx::Sqrt: one elementwise pass (common/elementwise.cuh), the CPU reference's
// arithmetic in the compute type (float for FP16/BF16).
#include "../common/elementwise.cuh"

namespace opforge::ops {
namespace {
struct SqrtF {
  template <typename C>
  __device__ C operator()(C x) const {
    return static_cast<C>(dm::sqrt(x));
  }
};
}  // namespace

OPFORGE_TACTICS("ai.onnx::Sqrt", unaryTactics<kFloats>("Sqrt", constant(SqrtF{})));

}  // namespace opforge::ops
