// CUDA tactic of ai.onnx::Equal: one broadcasting elementwise pass (common/elementwise.cuh).
#include "../common/elementwise.cuh"

namespace opforge::ops {
namespace {
struct EqualF {
  template <typename C>
  __device__ bool operator()(C x, C y) const {
    return x == y;
  }
};
}  // namespace

OPFORGE_TACTICS("ai.onnx::Equal", binaryTactics<kAll, true>("Equal", constant(EqualF{})));

}  // namespace opforge::ops
