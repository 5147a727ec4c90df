// CUDA tactic of ai.onnx::Dropout (inference): a device copy of the data and an all-true mask (when
// the node lists it).
#include "../common/cuda_common.cuh"

namespace opforge::ops {

OPFORGE_TACTICS("ai.onnx::Dropout", [](OpDef& d) {
  d.tactic(
      1, "cuda.copy",
      [](KernelContext& k, std::span<const Tensor> in, std::span<const Tensor> out) -> Status {
        OPFORGE_RETURN_IF_ERROR(
            copyDevice(out[0].data, in[0].data, out[0].bytes(), streamOf(k), "Dropout"));
        if (out.size() > 1 && out[1].bytes())
          return cudaStatus(cudaMemsetAsync(out[1].data, 1, out[1].bytes(), streamOf(k)),
                            "Dropout mask");
        return Status::ok();
      },
      linearOnly);
});

}  // namespace opforge::ops
