// CUDA tactic of ai.onnx::DepthToSpace: the 6-D permutation of the reference (DCR or CRD) through
// the transpose kernels (common/movement.cuh).
#include "../common/movement.cuh"

namespace opforge::ops {

OPFORGE_TACTICS("ai.onnx::DepthToSpace", [](OpDef& d) {
  d.tactic(
      1, "cuda.permute",
      [](KernelContext& k, std::span<const Tensor> in, std::span<const Tensor> out) -> Status {
        const auto& dm = in[0].desc.dims;
        const int64_t b = k.attr<int64_t>("blocksize"), c = dm[1] / (b * b);
        const size_t es = dtypeSize(in[0].desc.dtype);
        if (k.attr<std::string>("mode") == "DCR")
          return launchPermute(in[0].data, out[0].data, es, {dm[0], b, b, c, dm[2], dm[3]},
                               {0, 3, 4, 1, 5, 2}, streamOf(k), "DepthToSpace");
        return launchPermute(in[0].data, out[0].data, es, {dm[0], c, b, b, dm[2], dm[3]},
                             {0, 1, 4, 2, 5, 3}, streamOf(k), "DepthToSpace");
      },
      linearOnly);
});

}  // namespace opforge::ops
