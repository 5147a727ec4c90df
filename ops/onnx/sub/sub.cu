// CUDA tactic of ai.onnx::Sub: one broadcasting elementwise pass (common/elementwise.cuh).
#include "../common/elementwise.cuh"

namespace opforge::ops {
namespace {
struct SubF {
  template <typename C>
  __device__ C operator()(C x, C y) const {
    return x - y;
  }
};
}  // namespace

OPFORGE_TACTICS("ai.onnx::Sub", binaryTactics<kNumeric>("Sub", constant(SubF{})));

}  // namespace opforge::ops
