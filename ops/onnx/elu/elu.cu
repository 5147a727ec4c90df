// CUDA tactic of ai.onnx::Elu: one elementwise pass (common/elementwise.cuh), the CPU reference's
// arithmetic in the compute type (float for FP16/BF16).
#include "../common/elementwise.cuh"

namespace opforge::ops {
namespace {
struct EluF {
  double alpha;
  template <typename C>
  __device__ C operator()(C x) const {
    return x >= C(0) ? x : static_cast<C>(static_cast<C>(alpha) * dm::expm1(x));
  }
};
}  // namespace

OPFORGE_TACTICS("ai.onnx::Elu", unaryTactics<kFloats>("Elu", [](const AttrMap& a) {
                  return EluF{a.get<double>("alpha")};
                }));

}  // namespace opforge::ops
