// CUDA tactic of ai.onnx::Softplus: one elementwise pass (common/elementwise.cuh), the CPU
// reference's arithmetic in the compute type (float for FP16/BF16).
#include "../common/elementwise.cuh"

namespace opforge::ops {
namespace {
struct SoftplusF {
  template <typename C>
  __device__ C operator()(C x) const {
    return static_cast<C>((x > C(0) ? x : C(0)) + dm::log1p(dm::exp(-dm::fabs(x))));
  }
};
}  // namespace

OPFORGE_TACTICS("ai.onnx::Softplus", unaryTactics<kFloats>("Softplus", constant(SoftplusF{})));

}  // namespace opforge::ops
