// CUDA tactics of opforge::FusedAddLayerNorm: LayerNormalization's row kernels reading X + R
// (ops/onnx/common/norm_cuda.cuh), a warp or a block per row.
#include "../../onnx/common/norm_cuda.cuh"

namespace opforge::ops {
namespace {
template <bool kBlock>
Status addLayerNormCuda(KernelContext& k, std::span<const Tensor> in, std::span<const Tensor> out) {
  return launchLayerNorm(k, in[0], &in[1], in[2], hasIn(in, 3) ? &in[3] : nullptr, out, kBlock,
                         "FusedAddLayerNorm");
}
}  // namespace

OPFORGE_TACTICS("opforge::FusedAddLayerNorm", [](OpDef& d) {
  d.tactic(1, "cuda.warp", addLayerNormCuda<false>, linearOnly);
  d.tactic(2, "cuda.block", addLayerNormCuda<true>, linearOnly);
});

}  // namespace opforge::ops
