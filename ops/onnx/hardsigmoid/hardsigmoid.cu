// CUDA tactic of ai.onnx::HardSigmoid: one elementwise pass (common/elementwise.cuh), the CPU
// reference's arithmetic in the compute type (float for FP16/BF16).
#include "../common/elementwise.cuh"

namespace opforge::ops {
namespace {
struct HardSigmoidF {
  double alpha, beta;
  template <typename C>
  __device__ C operator()(C x) const {
    const C v = static_cast<C>(alpha) * x + static_cast<C>(beta);
    return dmax(C(0), dmin(C(1), v));
  }
};
}  // namespace

OPFORGE_TACTICS("ai.onnx::HardSigmoid", unaryTactics<kFloats>("HardSigmoid", [](const AttrMap& a) {
                  return HardSigmoidF{a.get<double>("alpha"), a.get<double>("beta")};
                }));

}  // namespace opforge::ops
