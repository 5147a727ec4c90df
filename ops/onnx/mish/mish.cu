// CUDA tactic of ai.onnx::Mish: one elementwise pass (common/elementwise.cuh), the CPU reference's
// arithmetic in the compute type (float for FP16/BF16).
#include "../common/elementwise.cuh"

namespace opforge::ops {
namespace {
struct MishF {
  template <typename C>
  __device__ C operator()(C x) const {
    const C sp = (x > C(0) ? x : C(0)) + dm::log1p(dm::exp(-dm::fabs(x)));
    return static_cast<C>(x * dm::tanh(sp));
  }
};
}  // namespace

OPFORGE_TACTICS("ai.onnx::Mish", unaryTactics<kFloats>("Mish", constant(MishF{})));

}  // namespace opforge::ops
