// CUDA tactic of ai.onnx::Cast: one conversion pass (common/cast_cuda.cu; a copy when the types
// agree).
#include "../common/cast_cuda.h"
#include "../common/cuda_common.cuh"

namespace opforge::ops {

OPFORGE_TACTICS("ai.onnx::Cast", [](OpDef& d) {
  d.tactic(
      1, "cuda.convert",
      [](KernelContext& k, std::span<const Tensor> in, std::span<const Tensor> out) -> Status {
        return castDevice(in[0], out[0], k.stream(), "Cast");
      },
      castApplies);
});

}  // namespace opforge::ops
