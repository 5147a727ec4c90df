// CUDA tactics of ai.onnx::QLinearMatMul: common/qlinear_cuda.cuh's product, one thread per output
// element, exact 32-bit accumulation, requantized as the CPU reference (cuda.direct), or INT8
// tensor cores through cuBLASLt with the zero points folded in from row sums (cuda.lt_int8).
#include "../common/qlinear_cuda.cuh"
#include "qlinearmatmul.h"

namespace opforge::ops {
namespace {

template <bool kLt>
Status qlinearMatMulCuda(KernelContext& k, std::span<const Tensor> in,
                         std::span<const Tensor> out) {
  OPFORGE_RETURN_IF_ERROR(qlinearMatMulCounts(in));
  const Tensor &a = in[0], &b = in[3];
  OPFORGE_ASSIGN_OR_RETURN(MatMulPlan p, planMatMul(a.desc, b.desc, a.desc.dtype));
  QParams q;
  q.sa = in[1].data, q.nsa = in[1].numel();
  q.za = in[2].data, q.nza = in[2].numel();
  q.sb = in[4].data, q.nsb = in[4].numel();
  q.zb = in[5].data, q.nzb = in[5].numel();
  q.sy = in[6].data, q.zy = in[7].data;
  q.relu = k.attr<int64_t>("_relu") != 0;
  q.ts = in[1].desc.dtype, q.ty = out[0].desc.dtype;
  const int64_t rows = a.desc.rank() == 1 ? 1 : a.desc.dims[a.desc.rank() - 2];
  if constexpr (kLt)
    return qgemmCuda(p, a.data, b.data, out[0].data, rows, a.desc.dtype, b.desc.dtype, q,
                     k.workspace(), k.workspaceSize(), streamOf(k), k.errorRecord(),
                     "QLinearMatMul");
  else
    return qmatmulCuda(p, a.data, b.data, out[0].data, rows, a.desc.dtype, b.desc.dtype, q,
                       streamOf(k), k.errorRecord(), "QLinearMatMul");
}

}  // namespace

OPFORGE_TACTICS("ai.onnx::QLinearMatMul", [](OpDef& d) {
  qmatmulTactics(d, qlinearMatMulCuda<false>, qlinearMatMulCuda<true>, 3);
});

}  // namespace opforge::ops
