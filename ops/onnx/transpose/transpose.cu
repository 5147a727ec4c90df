// CUDA tactic of ai.onnx::Transpose: a strided copy when the innermost axis stays innermost
// (16-byte units where the shape allows), else a 32x32 tiled transpose through shared memory
// (common/movement.cuh).
#include "../common/movement.cuh"

namespace opforge::ops {
namespace {
Status transposeCuda(KernelContext& k, std::span<const Tensor> in, std::span<const Tensor> out) {
  const Tensor &x = in[0], &y = out[0];
  const int r = x.desc.rank();
  std::vector<int> perm(r);
  if (k.attrs().has("perm")) {
    const auto p = k.attr<std::vector<int64_t>>("perm");
    for (int i = 0; i < r; ++i) perm[i] = wrapAxis(p[i], r);
  } else {
    for (int i = 0; i < r; ++i) perm[i] = r - 1 - i;
  }
  return launchPermute(x.data, y.data, dtypeSize(x.desc.dtype), x.desc.dims, perm, streamOf(k),
                       "Transpose");
}
}  // namespace

OPFORGE_TACTICS("ai.onnx::Transpose",
                [](OpDef& d) { d.tactic(1, "cuda.permute", transposeCuda, linearOnly); });

}  // namespace opforge::ops
