// CUDA tactic of ai.onnx::LeakyRelu: one elementwise pass (common/elementwise.cuh), the CPU
// reference's arithmetic in the compute type (float for FP16/BF16).
#include "../common/elementwise.cuh"

namespace opforge::ops {
namespace {
struct LeakyReluF {
  double alpha;
  template <typename C>
  __device__ C operator()(C x) const {
    return x >= C(0) ? x : static_cast<C>(static_cast<C>(alpha) * x);
  }
};
}  // namespace

OPFORGE_TACTICS("ai.onnx::LeakyRelu", unaryTactics<kFloats>("LeakyRelu", [](const AttrMap& a) {
                  return LeakyReluF{a.get<double>("alpha")};
                }));

}  // namespace opforge::ops
