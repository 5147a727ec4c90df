// CUDA tactic of ai.onnx::Mul: one broadcasting elementwise pass (common/elementwise.cuh).
#include "../common/elementwise.cuh"

namespace opforge::ops {
namespace {
struct MulF {
  template <typename C>
  __device__ C operator()(C x, C y) const {
    return x * y;
  }
};
}  // namespace

OPFORGE_TACTICS("ai.onnx::Mul", binaryTactics<kNumeric>("Mul", constant(MulF{})));

}  // namespace opforge::ops
