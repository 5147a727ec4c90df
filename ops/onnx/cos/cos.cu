// CUDA tactic of ai.onnx::Cos: one elementwise pass (common/elementwise.cuh), the CPU reference's
// arithmetic in the compute type (float for FP16/BF16).
#include "../common/elementwise.cuh"

namespace opforge::ops {
namespace {
struct CosF {
  template <typename C>
  __device__ C operator()(C x) const {
    return static_cast<C>(dm::cos(x));
  }
};
}  // namespace

OPFORGE_TACTICS("ai.onnx::Cos", unaryTactics<kFloats>("Cos", constant(CosF{})));

}  // namespace opforge::ops
