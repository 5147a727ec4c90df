// CUDA tactic of ai.onnx::Identity: nothing when the output shares the input's memory (the usual
// case: the output aliases the input), else one device copy.
#include "../common/cuda_common.cuh"

namespace opforge::ops {

OPFORGE_TACTICS("ai.onnx::Identity", [](OpDef& d) {
  d.tactic(
      1, "cuda.copy",
      [](KernelContext& k, std::span<const Tensor> in, std::span<const Tensor> out) -> Status {
        return copyDevice(out[0].data, in[0].data, out[0].bytes(), streamOf(k), "Identity");
      },
      [](const AttrMap&, std::span<const TensorDesc> in, std::span<const TensorDesc> out) {
        return in[0].format == out[0].format;
      });
});

}  // namespace opforge::ops
