// CUDA tactic of ai.onnx::Sinh: one elementwise pass (common/elementwise.cuh), the CPU reference's
// arithmetic in the compute type (float for FP16/BF16).
#include "../common/elementwise.cuh"

namespace opforge::ops {
namespace {
struct SinhF {
  template <typename C>
  __device__ C operator()(C x) const {
    return static_cast<C>(dm::sinh(x));
  }
};
}  // namespace

OPFORGE_TACTICS("ai.onnx::Sinh", unaryTactics<kFloats>("Sinh", constant(SinhF{})));

}  // namespace opforge::ops
