// CUDA tactic of ai.onnx::Softsign: one elementwise pass (common/elementwise.cuh), the CPU
// reference's arithmetic in the compute type (float for FP16/BF16).
#include "../common/elementwise.cuh"

namespace opforge::ops {
namespace {
struct SoftsignF {
  template <typename C>
  __device__ C operator()(C x) const {
    return static_cast<C>(x / (C(1) + dm::fabs(x)));
  }
};
}  // namespace

OPFORGE_TACTICS("ai.onnx::Softsign", unaryTactics<kFloats>("Softsign", constant(SoftsignF{})));

}  // namespace opforge::ops
