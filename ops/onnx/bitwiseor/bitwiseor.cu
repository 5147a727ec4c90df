// CUDA tactic of ai.onnx::BitwiseOr: one broadcasting elementwise pass (common/elementwise.cuh).
#include "../common/elementwise.cuh"

namespace opforge::ops {
namespace {
struct BitwiseOrF {
  template <typename C>
  __device__ C operator()(C x, C y) const {
    return static_cast<C>(x | y);
  }
};
}  // namespace

OPFORGE_TACTICS("ai.onnx::BitwiseOr",
                binaryTactics<kSigned | kUnsigned>("BitwiseOr", constant(BitwiseOrF{})));

}  // namespace opforge::ops
