// CUDA tactic of ai.onnx::LessOrEqual: one broadcasting elementwise pass (common/elementwise.cuh).
#include "../common/elementwise.cuh"

namespace opforge::ops {
namespace {
struct LessOrEqualF {
  template <typename C>
  __device__ bool operator()(C x, C y) const {
    return x <= y;
  }
};
}  // namespace

OPFORGE_TACTICS("ai.onnx::LessOrEqual",
                binaryTactics<kNumeric, true>("LessOrEqual", constant(LessOrEqualF{})));

}  // namespace opforge::ops
