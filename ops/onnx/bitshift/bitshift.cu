// CUDA tactic of ai.onnx::BitShift: one broadcasting elementwise pass (common/elementwise.cuh).
#include "../common/elementwise.cuh"

namespace opforge::ops {
namespace {
struct BitShiftF {
  bool left;
  template <typename C>
  __device__ C operator()(C x, C y) const {
    if (y >= static_cast<C>(sizeof(C) * 8)) return C(0);
    return static_cast<C>(left ? x << y : x >> y);
  }
};
}  // namespace

OPFORGE_TACTICS("ai.onnx::BitShift", binaryTactics<kUnsigned>("BitShift", [](const AttrMap& a) {
                  return BitShiftF{a.get<std::string>("direction") == "LEFT"};
                }));

}  // namespace opforge::ops
