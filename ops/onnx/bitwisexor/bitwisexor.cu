// CUDA tactic of ai.onnx::BitwiseXor: one broadcasting elementwise pass (common/elementwise.cuh).
#include "../common/elementwise.cuh"

namespace opforge::ops {
namespace {
struct BitwiseXorF {
  template <typename C>
  __device__ C operator()(C x, C y) const {
    return static_cast<C>(x ^ y);
  }
};
}  // namespace

OPFORGE_TACTICS("ai.onnx::BitwiseXor",
                binaryTactics<kSigned | kUnsigned>("BitwiseXor", constant(BitwiseXorF{})));

}  // namespace opforge::ops
