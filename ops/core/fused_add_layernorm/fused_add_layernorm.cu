// CUDA tactics of opforge::FusedAddLayerNorm: LayerNormalization's row kernels reading X + R
// (ops/onnx/common/norm_cuda.cuh), a warp or a block per row, or a warp per row held in registers;
// each writes X + R to output Sum as well when the node has it.
#include "../../onnx/common/norm_cuda.cuh"

namespace opforge::ops {
namespace {
// Output Sum (out[1]) when the node asks for it: the kernels write X + R there too.
void* sumOf(std::span<const Tensor> out) {
  return out.size() > 1 && out[1].numel() > 0 ? out[1].data : nullptr;
}
template <bool kBlock>
Status addLayerNormCuda(KernelContext& k, std::span<const Tensor> in, std::span<const Tensor> out) {
  return launchLayerNorm(k, in[0], &in[1], in[2], hasIn(in, 3) ? &in[3] : nullptr, out.first(1),
                         kBlock, "FusedAddLayerNorm", sumOf(out));
}
Status addLayerNormVecCuda(KernelContext& k, std::span<const Tensor> in,
                           std::span<const Tensor> out) {
  return launchLayerNormVec(k, in[0], &in[1], in[2], hasIn(in, 3) ? &in[3] : nullptr, out.first(1),
                            "FusedAddLayerNorm", sumOf(out));
}
bool addLayerNormVecOk(const AttrMap& at, std::span<const TensorDesc> in,
                       std::span<const TensorDesc> out) {
  return allLinear(in, out) &&
         layerNormVecApplies(at, in[0], in[2], present(in, 3) ? &in[3] : nullptr);
}
}  // namespace

OPFORGE_TACTICS("opforge::FusedAddLayerNorm", [](OpDef& d) {
  d.tactic(1, "cuda.warp", addLayerNormCuda<false>, linearOnly);
  d.tactic(2, "cuda.block", addLayerNormCuda<true>, linearOnly);
  d.tactic(3, "cuda.warp_vec", addLayerNormVecCuda, addLayerNormVecOk);
});

}  // namespace opforge::ops
