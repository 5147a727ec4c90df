// CUDA tactic of ai.onnx::SpaceToDepth: the 6-D permutation of the reference through the transpose
// kernels (common/movement.cuh).
#include "../common/movement.cuh"

namespace opforge::ops {

OPFORGE_TACTICS("ai.onnx::SpaceToDepth", [](OpDef& d) {
  d.tactic(
      1, "cuda.permute",
      [](KernelContext& k, std::span<const Tensor> in, std::span<const Tensor> out) -> Status {
        const auto& dm = in[0].desc.dims;
        const int64_t b = k.attr<int64_t>("blocksize");
        const bool crd = k.attr<std::string>("mode") == "CRD";
        return launchPermute(
            in[0].data, out[0].data, dtypeSize(in[0].desc.dtype),
            {dm[0], dm[1], dm[2] / b, b, dm[3] / b, b},
            crd ? std::vector<int>{0, 1, 3, 5, 2, 4} : std::vector<int>{0, 3, 5, 1, 2, 4},
            streamOf(k), "SpaceToDepth");
      },
      linearOnly);
});

}  // namespace opforge::ops
