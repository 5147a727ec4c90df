// CUDA tactics of ai.onnx::QLinearConv (common/qlinear_cuda.cuh): cuda.direct, one thread per
// output element, exact 32-bit accumulation with the INT32 bias, requantized as the CPU reference;
// and for group 1 cuda.lt_int8, im2col into an INT8 cuBLASLt GEMM with the zero points folded in
// from row sums, then the same requantization.
#include "../common/qlinear_cuda.cuh"
#include "qlinearconv.h"

namespace opforge::ops {
namespace {

template <bool kLt>
Status qlinearConvCuda(KernelContext& k, std::span<const Tensor> in, std::span<const Tensor> out) {
  OPFORGE_RETURN_IF_ERROR(qlinearConvCounts(in));
  OPFORGE_ASSIGN_OR_RETURN(ConvArgs a, convArgsOf(k.attrs(), in[0].desc, in[3].desc, out[0].desc));
  a.x = in[0].data, a.w = in[3].data, a.y = out[0].data;
  QParams q;
  q.sa = in[1].data, q.za = in[2].data;
  q.sb = in[4].data, q.nsb = in[4].numel();
  q.zb = in[5].data, q.nzb = in[5].numel();
  q.sy = in[6].data, q.zy = in[7].data;
  q.relu = k.attr<int64_t>("_relu") != 0;
  q.ts = DataType::kFloat32, q.ty = out[0].desc.dtype;
  if constexpr (kLt)
    return qconvGemmCuda(a, present(in, 8) ? in[8].data : nullptr, in[0].desc.dtype,
                         in[3].desc.dtype, q, k.workspace(), k.workspaceSize(), streamOf(k),
                         k.errorRecord(), "QLinearConv");
  else
    return qconvCuda(a, present(in, 8) ? in[8].data : nullptr, in[0].desc.dtype, in[3].desc.dtype,
                     q, streamOf(k), k.errorRecord(), "QLinearConv");
}

}  // namespace

OPFORGE_TACTICS("ai.onnx::QLinearConv", [](OpDef& d) {
  qconvTactics(d, qlinearConvCuda<false>, qlinearConvCuda<true>, 3);
});

}  // namespace opforge::ops
