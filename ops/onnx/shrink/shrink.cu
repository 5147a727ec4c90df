// CUDA tactic of ai.onnx::Shrink: one elementwise pass (common/elementwise.cuh), the CPU
// reference's arithmetic in the compute type (float for FP16/BF16).
#include "../common/elementwise.cuh"

namespace opforge::ops {
namespace {
struct ShrinkF {
  double bias, lambd;
  template <typename C>
  __device__ C operator()(C x) const {
    // In double, as the reference; integers convert through int64 (what the CPU does on x86).
    const double v = static_cast<double>(x);
    const double r = v < -lambd ? v + bias : v > lambd ? v - bias : 0.0;
    if constexpr (std::is_integral_v<C>)
      return static_cast<C>(static_cast<int64_t>(r));
    else
      return static_cast<C>(r);
  }
};
}  // namespace

OPFORGE_TACTICS("ai.onnx::Shrink",
                unaryTactics<kFloats | kSigned | kUnsigned>("Shrink", [](const AttrMap& a) {
                  return ShrinkF{a.get<double>("bias"), a.get<double>("lambd")};
                }));

}  // namespace opforge::ops
