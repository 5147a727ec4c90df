// CUDA tactic of ai.onnx::Asinh: one elementwise pass (common/elementwise.cuh), the CPU reference's
// arithmetic in the compute type (float for FP16/BF16).
#include "../common/elementwise.cuh"

namespace opforge::ops {
namespace {
struct AsinhF {
  template <typename C>
  __device__ C operator()(C x) const {
    return static_cast<C>(dm::asinh(x));
  }
};
}  // namespace

OPFORGE_TACTICS("ai.onnx::Asinh", unaryTactics<kFloats>("Asinh", constant(AsinhF{})));

}  // namespace opforge::ops
