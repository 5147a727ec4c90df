// CUDA tactic of ai.onnx::PRelu: one broadcasting elementwise pass (common/elementwise.cuh).
#include "../common/elementwise.cuh"

namespace opforge::ops {
namespace {
struct PReluF {
  template <typename C>
  __device__ C operator()(C x, C s) const {
    return x < C(0) ? static_cast<C>(s * x) : x;
  }
};
}  // namespace

OPFORGE_TACTICS("ai.onnx::PRelu", binaryTactics<kFloats | kSigned>("PRelu", constant(PReluF{})));

}  // namespace opforge::ops
