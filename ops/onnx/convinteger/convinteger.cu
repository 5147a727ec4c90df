// CUDA tactics of ai.onnx::ConvInteger: common/qlinear_cuda.cuh's direct convolution, one thread
// per output element, exact 32-bit accumulation (cuda.direct), or for group 1 im2col into an INT8
// cuBLASLt GEMM with the zero points folded in from row sums (cuda.lt_int8).
#include "../common/qlinear_cuda.cuh"
#include "convinteger.h"

namespace opforge::ops {
namespace {

template <bool kLt>
Status convIntegerCuda(KernelContext& k, std::span<const Tensor> in, std::span<const Tensor> out) {
  OPFORGE_RETURN_IF_ERROR(convIntegerCounts(in));
  OPFORGE_ASSIGN_OR_RETURN(ConvArgs a, convArgsOf(k.attrs(), in[0].desc, in[1].desc, out[0].desc));
  a.x = in[0].data, a.w = in[1].data, a.y = out[0].data;
  QParams q;
  if (present(in, 2)) q.za = in[2].data;
  if (present(in, 3)) q.zb = in[3].data, q.nzb = in[3].numel();
  if constexpr (kLt)
    return qconvGemmCuda(a, nullptr, in[0].desc.dtype, in[1].desc.dtype, q, k.workspace(),
                         k.workspaceSize(), streamOf(k), k.errorRecord(), "ConvInteger");
  else
    return qconvCuda(a, nullptr, in[0].desc.dtype, in[1].desc.dtype, q, streamOf(k),
                     k.errorRecord(), "ConvInteger");
}

}  // namespace

OPFORGE_TACTICS("ai.onnx::ConvInteger", [](OpDef& d) {
  qconvTactics(d, convIntegerCuda<false>, convIntegerCuda<true>, 1);
});

}  // namespace opforge::ops
