// CUDA tactics of ai.onnx::LayerNormalization: a warp or a block per row, or a warp per row held
// in registers with 16-byte accesses (common/norm_cuda.cuh);
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
Status layerNormVecCuda(KernelContext& k, std::span<const Tensor> in, std::span<const Tensor> out) {
  return launchLayerNormVec(k, in[0], nullptr, in[1], hasIn(in, 2) ? &in[2] : nullptr, out,
                            "LayerNormalization");
}
bool layerNormVecOk(const AttrMap& at, std::span<const TensorDesc> in,
                    std::span<const TensorDesc> out) {
  return allLinear(in, out) &&
         layerNormVecApplies(at, in[0], in[1], present(in, 2) ? &in[2] : nullptr);
}
}  // namespace

OPFORGE_TACTICS("ai.onnx::LayerNormalization", [](OpDef& d) {
  d.tactic(1, "cuda.warp", layerNormCuda<false>, linearOnly);
  d.tactic(2, "cuda.block", layerNormCuda<true>, linearOnly);
  d.tactic(3, "cuda.warp_vec", layerNormVecCuda, layerNormVecOk);
});

}  // namespace opforge::ops
