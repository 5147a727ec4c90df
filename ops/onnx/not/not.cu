// CUDA tactic of ai.onnx::Not: one elementwise pass (common/elementwise.cuh), the CPU reference's
// arithmetic in the compute type (float for FP16/BF16).
#include "../common/elementwise.cuh"

namespace opforge::ops {
namespace {
struct NotF {
  template <typename C>
  __device__ C operator()(C x) const {
    return !x;
  }
};
}  // namespace

OPFORGE_TACTICS("ai.onnx::Not", unaryTactics<kBools>("Not", constant(NotF{})));

}  // namespace opforge::ops
