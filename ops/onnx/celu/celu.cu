// CUDA tactic of ai.onnx::Celu: one elementwise pass (common/elementwise.cuh), the CPU reference's
// arithmetic in the compute type (float for FP16/BF16).
#include "../common/elementwise.cuh"

namespace opforge::ops {
namespace {
struct CeluF {
  double alpha;
  template <typename C>
  __device__ C operator()(C x) const {
    const C al = static_cast<C>(alpha);
    return x > C(0) ? x : static_cast<C>(al * dm::expm1(x / al));
  }
};
}  // namespace

OPFORGE_TACTICS("ai.onnx::Celu", unaryTactics<kFloats>("Celu", [](const AttrMap& a) {
                  return CeluF{a.get<double>("alpha")};
                }));

}  // namespace opforge::ops
