// CUDA tactic of ai.onnx::Transpose, any formats: a strided copy when the innermost axis of the
// bytes stays innermost (16-byte units where the shape allows), else a 32x32 tiled transpose
// through shared memory (common/movement.cuh).
#include "../common/movement.cuh"
#include "transpose.h"

namespace opforge::ops {
namespace {
Status transposeCuda(KernelContext& k, std::span<const Tensor> in, std::span<const Tensor> out) {
  const Tensor &x = in[0], &y = out[0];
  const int r = x.desc.rank();
  OPFORGE_ASSIGN_OR_RETURN(const auto perm, transposePerm(k.attrs(), r));
  OPFORGE_RETURN_IF_ERROR(checkTransposed(x.desc, y.desc, perm));
  const BytePermute b = bytePermute(x.desc, y.desc, perm);
  if (x.data == y.data) {  // a view in place (the builder's transpose_views_in_place)
    if (b.identity()) return Status::ok();
    return Status::invalid("Transpose " + describe(x.desc) + " -> " + describe(y.desc) +
                           " moves bytes and cannot run in place");
  }
  return launchPermute(x.data, y.data, dtypeSize(x.desc.dtype), b.dims, b.perm, streamOf(k),
                       "Transpose");
}
// In a plan's storage of its input it writes nothing; given its own buffer it copies the bytes.
Status viewCuda(KernelContext& k, std::span<const Tensor> in, std::span<const Tensor> out) {
  return copyDevice(out[0].data, in[0].data, out[0].bytes(), streamOf(k), "Transpose");
}
}  // namespace

OPFORGE_TACTICS("ai.onnx::Transpose", [](OpDef& d) {
  d.tactic(1, "cuda.permute", transposeCuda);
  d.viewTactic(2, "cuda.view", viewCuda, transposeIsView);
});

}  // namespace opforge::ops
