// CUDA tactic of ai.onnx::Sigmoid: one elementwise pass (common/elementwise.cuh), the CPU
// reference's arithmetic in the compute type (float for FP16/BF16).
#include "../common/elementwise.cuh"

namespace opforge::ops {
namespace {
struct SigmoidF {
  template <typename C>
  __device__ C operator()(C x) const {
    if (x >= C(0)) return static_cast<C>(C(1) / (C(1) + dm::exp(-x)));
    const C e = dm::exp(x);
    return static_cast<C>(e / (C(1) + e));
  }
};
}  // namespace

OPFORGE_TACTICS("ai.onnx::Sigmoid", unaryTactics<kFloats>("Sigmoid", constant(SigmoidF{})));

}  // namespace opforge::ops
