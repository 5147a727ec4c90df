// CUDA tactic of ai.onnx::Or: one broadcasting elementwise pass (common/elementwise.cuh).
#include "../common/elementwise.cuh"

namespace opforge::ops {
namespace {
struct OrF {
  template <typename C>
  __device__ bool operator()(C x, C y) const {
    return x || y;
  }
};
}  // namespace

OPFORGE_TACTICS("ai.onnx::Or", binaryTactics<kBools, true>("Or", constant(OrF{})));

}  // namespace opforge::ops
