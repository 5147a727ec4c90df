// CUDA tactic of ai.onnx::Swish: one elementwise pass (common/elementwise.cuh), the CPU reference's
// arithmetic in the compute type (float for FP16/BF16).
#include "../common/elementwise.cuh"

namespace opforge::ops {
namespace {
struct SwishF {
  double alpha;
  template <typename C>
  __device__ C operator()(C x) const {
    // In double, as the reference.
    const double z = alpha * static_cast<double>(x);
    const double s = z >= 0 ? 1 / (1 + ::exp(-z)) : ::exp(z) / (1 + ::exp(z));
    return static_cast<C>(static_cast<double>(x) * s);
  }
};
}  // namespace

OPFORGE_TACTICS("ai.onnx::Swish", unaryTactics<kFloats>("Swish", [](const AttrMap& a) {
                  return SwishF{a.get<double>("alpha")};
                }));

}  // namespace opforge::ops
