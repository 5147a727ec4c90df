// CUDA tactic of ai.onnx::And: one broadcasting elementwise pass (common/elementwise.cuh).
#include "../common/elementwise.cuh"

namespace opforge::ops {
namespace {
struct AndF {
  template <typename C>
  __device__ bool operator()(C x, C y) const {
    return x && y;
  }
};
}  // namespace

OPFORGE_TACTICS("ai.onnx::And", binaryTactics<kBools, true>("And", constant(AndF{})));

}  // namespace opforge::ops
