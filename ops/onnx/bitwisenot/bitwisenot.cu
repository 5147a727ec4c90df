// CUDA tactic of ai.onnx::BitwiseNot: one elementwise pass (common/elementwise.cuh), the CPU
// reference's arithmetic in the compute type (float for FP16/BF16).
#include "../common/elementwise.cuh"

namespace opforge::ops {
namespace {
struct BitwiseNotF {
  template <typename C>
  __device__ C operator()(C x) const {
    return static_cast<C>(~x);
  }
};
}  // namespace

OPFORGE_TACTICS("ai.onnx::BitwiseNot",
                unaryTactics<kSigned | kUnsigned>("BitwiseNot", constant(BitwiseNotF{})));

}  // namespace opforge::ops
