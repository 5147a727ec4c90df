// CUDA tactic of ai.onnx::Relu: one elementwise pass (common/elementwise.cuh), the CPU reference's
// arithmetic in the compute type (float for FP16/BF16).
#include "../common/elementwise.cuh"

namespace opforge::ops {
namespace {
struct ReluF {
  template <typename C>
  __device__ C operator()(C x) const {
    return x < C(0) ? C(0) : x;  // NaN stays NaN (std::max(x, 0) on the CPU)
  }
};
}  // namespace

OPFORGE_TACTICS("ai.onnx::Relu", unaryTactics<kFloats | kSigned>("Relu", constant(ReluF{})));

}  // namespace opforge::ops
