// CUDA tactic of ai.onnx::Log: one elementwise pass (common/elementwise.cuh), the CPU reference's
// arithmetic in the compute type (float for FP16/BF16).
#include "../common/elementwise.cuh"

namespace opforge::ops {
namespace {
struct LogF {
  template <typename C>
  __device__ C operator()(C x) const {
    return static_cast<C>(dm::log(x));
  }
};
}  // namespace

OPFORGE_TACTICS("ai.onnx::Log", unaryTactics<kFloats>("Log", constant(LogF{})));

}  // namespace opforge::ops
