// CUDA tactic of ai.onnx::ThresholdedRelu: one elementwise pass (common/elementwise.cuh), the CPU
// reference's arithmetic in the compute type (float for FP16/BF16).
#include "../common/elementwise.cuh"

namespace opforge::ops {
namespace {
struct ThresholdedReluF {
  double alpha;
  template <typename C>
  __device__ C operator()(C x) const {
    return x > static_cast<C>(alpha) ? x : C(0);
  }
};
}  // namespace

OPFORGE_TACTICS("ai.onnx::ThresholdedRelu",
                unaryTactics<kFloats>("ThresholdedRelu", [](const AttrMap& a) {
                  return ThresholdedReluF{a.get<double>("alpha")};
                }));

}  // namespace opforge::ops
