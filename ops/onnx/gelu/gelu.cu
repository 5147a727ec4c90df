// CUDA tactic of ai.onnx::Gelu: one elementwise pass (common/elementwise.cuh), the CPU reference's
// arithmetic in the compute type (float for FP16/BF16).
#include "../common/elementwise.cuh"

namespace opforge::ops {
namespace {
struct GeluF {
  bool tanh_form;
  template <typename C>
  __device__ C operator()(C x) const {
    if (tanh_form) {
      const C k = static_cast<C>(0.7978845608028654);  // sqrt(2 / pi)
      return static_cast<C>(C(0.5) * x * (C(1) + dm::tanh(k * (x + C(0.044715) * x * x * x))));
    }
    return static_cast<C>(C(0.5) * x * (C(1) + dm::erf(x * static_cast<C>(0.7071067811865476))));
  }
};
}  // namespace

OPFORGE_TACTICS("ai.onnx::Gelu", unaryTactics<kFloats>("Gelu", [](const AttrMap& a) {
                  return GeluF{a.get<std::string>("approximate") == "tanh"};
                }));

}  // namespace opforge::ops
