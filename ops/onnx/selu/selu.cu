// CUDA tactic of ai.onnx::Selu: one elementwise pass (common/elementwise.cuh), the CPU reference's
// arithmetic in the compute type (float for FP16/BF16).
#include "../common/elementwise.cuh"

namespace opforge::ops {
namespace {
struct SeluF {
  double alpha, gamma;
  template <typename C>
  __device__ C operator()(C x) const {
    const C g = static_cast<C>(gamma), al = static_cast<C>(alpha);
    return x > C(0) ? static_cast<C>(g * x) : static_cast<C>(g * al * dm::expm1(x));
  }
};
}  // namespace

OPFORGE_TACTICS("ai.onnx::Selu", unaryTactics<kFloats>("Selu", [](const AttrMap& a) {
                  return SeluF{a.get<double>("alpha"), a.get<double>("gamma")};
                }));

}  // namespace opforge::ops
