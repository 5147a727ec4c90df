// CUDA tactic of ai.onnx::HardSwish: one elementwise pass (common/elementwise.cuh), the CPU
// reference's arithmetic in the compute type (float for FP16/BF16).
#include "../common/elementwise.cuh"

namespace opforge::ops {
namespace {
struct HardSwishF {
  template <typename C>
  __device__ C operator()(C x) const {
    const C v = x / C(6) + C(0.5);
    return static_cast<C>(x * dmax(C(0), dmin(C(1), v)));
  }
};
}  // namespace

OPFORGE_TACTICS("ai.onnx::HardSwish", unaryTactics<kFloats>("HardSwish", constant(HardSwishF{})));

}  // namespace opforge::ops
