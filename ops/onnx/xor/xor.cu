// CUDA tactic of ai.onnx::Xor: one broadcasting elementwise pass (common/elementwise.cuh).
#include "../common/elementwise.cuh"

namespace opforge::ops {
namespace {
struct XorF {
  template <typename C>
  __device__ bool operator()(C x, C y) const {
    return x != y;
  }
};
}  // namespace

OPFORGE_TACTICS("ai.onnx::Xor", binaryTactics<kBools, true>("Xor", constant(XorF{})));

}  // namespace opforge::ops
