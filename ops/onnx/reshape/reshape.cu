// CUDA tactic of ai.onnx::Reshape: the same bytes under a new shape — nothing to do when the output
// shares the input's memory, else one device copy.
#include "../common/cuda_common.cuh"

namespace opforge::ops {

OPFORGE_TACTICS("ai.onnx::Reshape", [](OpDef& d) {
  d.tactic(
      1, "cuda.copy",
      [](KernelContext& k, std::span<const Tensor> in, std::span<const Tensor> out) -> Status {
        if (out[0].bytes() != in[0].bytes())
          return Status::internal("output holds " + std::to_string(out[0].bytes()) +
                                  " bytes, input " + std::to_string(in[0].bytes()));
        return copyDevice(out[0].data, in[0].data, out[0].bytes(), streamOf(k), "Reshape");
      },
      linearOnly);
});

}  // namespace opforge::ops
