// CUDA tactic of ai.onnx::Less: one broadcasting elementwise pass (common/elementwise.cuh).
#include "../common/elementwise.cuh"

namespace opforge::ops {
namespace {
struct LessF {
  template <typename C>
  __device__ bool operator()(C x, C y) const {
    return x < y;
  }
};
}  // namespace

OPFORGE_TACTICS("ai.onnx::Less", binaryTactics<kNumeric, true>("Less", constant(LessF{})));

}  // namespace opforge::ops
