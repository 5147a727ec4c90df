// CUDA tactic of ai.onnx::Gelu: one elementwise pass (common/elementwise.cuh), the CPU reference's
// arithmetic (opforge/epilogue.h's applyActivation) in the compute type (float for FP16/BF16).
#include "../common/elementwise.cuh"
#include "opforge/epilogue.h"

namespace opforge::ops {
namespace {
struct GeluF {
  Activation act;  // kGelu or kGeluTanh (opforge/epilogue.h)
  template <typename C>
  __device__ C operator()(C x) const {
    return applyActivation(x, act);
  }
};
}  // namespace

OPFORGE_TACTICS("ai.onnx::Gelu", unaryTactics<kFloats>("Gelu", [](const AttrMap& a) {
                  return GeluF{a.get<std::string>("approximate") == "tanh" ? Activation::kGeluTanh
                                                                           : Activation::kGelu};
                }));

}  // namespace opforge::ops
