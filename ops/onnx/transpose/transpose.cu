// CUDA tactic of ai.onnx::Transpose: a strided copy when the innermost axis stays innermost
// (16-byte units where the shape allows), else a 32x32 tiled transpose through shared memory
// (common/movement.cuh).
#include "../common/movement.cuh"
#include "transpose.h"

namespace opforge::ops {
namespace {
Status transposeCuda(KernelContext& k, std::span<const Tensor> in, std::span<const Tensor> out) {
  const Tensor &x = in[0], &y = out[0];
  const int r = x.desc.rank();
  OPFORGE_ASSIGN_OR_RETURN(const auto perm, transposePerm(k.attrs(), r));
  OPFORGE_RETURN_IF_ERROR(checkTransposed(x.desc, y.desc, perm));
  return launchPermute(x.data, y.data, dtypeSize(x.desc.dtype), x.desc.dims, perm, streamOf(k),
                       "Transpose");
}
}  // namespace

OPFORGE_TACTICS("ai.onnx::Transpose",
                [](OpDef& d) { d.tactic(1, "cuda.permute", transposeCuda, linearOnly); });

}  // namespace opforge::ops
