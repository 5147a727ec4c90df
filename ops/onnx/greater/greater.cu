// CUDA tactic of ai.onnx::Greater: one broadcasting elementwise pass (common/elementwise.cuh).
#include "../common/elementwise.cuh"

namespace opforge::ops {
namespace {
struct GreaterF {
  template <typename C>
  __device__ bool operator()(C x, C y) const {
    return x > y;
  }
};
}  // namespace

OPFORGE_TACTICS("ai.onnx::Greater", binaryTactics<kNumeric, true>("Greater", constant(GreaterF{})));

}  // namespace opforge::ops
