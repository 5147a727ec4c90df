// CUDA tactic of ai.onnx::IsInf: one elementwise pass (common/elementwise.cuh), the CPU reference's
// arithmetic in the compute type (float for FP16/BF16).
#include "../common/elementwise.cuh"

namespace opforge::ops {
namespace {
struct IsInfF {
  bool neg, pos;
  template <typename C>
  __device__ bool operator()(C x) const {
    return dm::isinf(x) && ((x > C(0) && pos) || (x < C(0) && neg));
  }
};
}  // namespace

OPFORGE_TACTICS(
    "ai.onnx::IsInf", unaryTactics<kFloats, true>("IsInf", [](const AttrMap& a) {
      return IsInfF{a.get<int64_t>("detect_negative") != 0, a.get<int64_t>("detect_positive") != 0};
    }));

}  // namespace opforge::ops
