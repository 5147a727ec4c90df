// CUDA tactic of ai.onnx::BitShift: one broadcasting elementwise pass (common/elementwise.cuh).
#include "../common/elementwise.cuh"
#include "bitshift.h"

namespace opforge::ops {
namespace {
struct BitShiftF {
  bool left;
  template <typename C>
  __device__ C operator()(C x, C y) const {
    return bitShift(x, y, left);
  }
};
}  // namespace

OPFORGE_TACTICS("ai.onnx::BitShift",
                binaryTactics<kUnsigned | kSigned>("BitShift", [](const AttrMap& a) {
                  return BitShiftF{a.get<std::string>("direction") == "LEFT"};
                }));

}  // namespace opforge::ops
