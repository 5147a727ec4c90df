// CUDA tactic of ai.onnx::BitwiseAnd: one broadcasting elementwise pass (common/elementwise.cuh).
#include "../common/elementwise.cuh"

namespace opforge::ops {
namespace {
struct BitwiseAndF {
  template <typename C>
  __device__ C operator()(C x, C y) const {
    return static_cast<C>(x & y);
  }
};
}  // namespace

OPFORGE_TACTICS("ai.onnx::BitwiseAnd",
                binaryTactics<kSigned | kUnsigned>("BitwiseAnd", constant(BitwiseAndF{})));

}  // namespace opforge::ops
