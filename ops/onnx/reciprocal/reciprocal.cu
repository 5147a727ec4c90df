// CUDA tactic of ai.onnx::Reciprocal: one elementwise pass (common/elementwise.cuh), the CPU
// reference's arithmetic in the compute type (float for FP16/BF16).
#include "../common/elementwise.cuh"

namespace opforge::ops {
namespace {
struct ReciprocalF {
  template <typename C>
  __device__ C operator()(C x) const {
    return static_cast<C>(C(1) / x);
  }
};
}  // namespace

OPFORGE_TACTICS("ai.onnx::Reciprocal",
                unaryTactics<kFloats>("Reciprocal", constant(ReciprocalF{})));

}  // namespace opforge::ops
