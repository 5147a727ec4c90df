// CUDA tactic of ai.onnx::GreaterOrEqual: one broadcasting elementwise pass
// (common/elementwise.cuh).
#include "../common/elementwise.cuh"

namespace opforge::ops {
namespace {
struct GreaterOrEqualF {
  template <typename C>
  __device__ bool operator()(C x, C y) const {
    return x >= y;
  }
};
}  // namespace

OPFORGE_TACTICS("ai.onnx::GreaterOrEqual",
                binaryTactics<kNumeric, true>("GreaterOrEqual", constant(GreaterOrEqualF{})));

}  // namespace opforge::ops
