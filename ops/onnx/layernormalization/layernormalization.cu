// CUDA tactics of ai.onnx::LayerNormalization: a warp or a block per row (common/norm_cuda.cuh);
// Scale and B broadcast over the normalized shape; the optional Mean / InvStdDev outputs written
// when the node lists them.
#include "../common/norm_cuda.cuh"

namespace opforge::ops {
namespace {
template <bool kBlock>
Status layerNormCuda(KernelContext& k, std::span<const Tensor> in, std::span<const Tensor> out) {
  return launchLayerNorm(k, in[0], nullptr, in[1], hasIn(in, 2) ? &in[2] : nullptr, out, kBlock,
                         "LayerNormalization");
}
}  // namespace

OPFORGE_TACTICS("ai.onnx::LayerNormalization", [](OpDef& d) {
  d.tactic(1, "cuda.warp", layerNormCuda<false>, linearOnly);
  d.tactic(2, "cuda.block", layerNormCuda<true>, linearOnly);
});

}  // namespace opforge::ops
