// CUDA tactic of ai.onnx::Add: one broadcasting elementwise pass (common/elementwise.cuh).
#include "../common/elementwise.cuh"

namespace opforge::ops {
namespace {
struct AddF {
  template <typename C>
  __device__ C operator()(C x, C y) const {
    return x + y;
  }
};
}  // namespace

OPFORGE_TACTICS("ai.onnx::Add", binaryTactics<kNumeric>("Add", constant(AddF{})));

}  // namespace opforge::ops
