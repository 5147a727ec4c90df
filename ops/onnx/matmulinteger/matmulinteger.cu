// CUDA tactics of ai.onnx::MatMulInteger: common/qlinear_cuda.cuh's product, one thread per output
// element, exact 32-bit accumulation (cuda.direct), or INT8 tensor cores through cuBLASLt with
// the zero points folded in from row sums (cuda.lt_int8, common/qlinear_cuda.cuh).
#include "../common/qlinear_cuda.cuh"
#include "matmulinteger.h"

namespace opforge::ops {
namespace {

template <bool kLt>
Status matmulIntegerCuda(KernelContext& k, std::span<const Tensor> in,
                         std::span<const Tensor> out) {
  OPFORGE_RETURN_IF_ERROR(matmulIntegerCounts(in));
  const Tensor &a = in[0], &b = in[1];
  OPFORGE_ASSIGN_OR_RETURN(MatMulPlan p, planMatMul(a.desc, b.desc, a.desc.dtype));
  QParams q;
  if (present(in, 2)) q.za = in[2].data, q.nza = in[2].numel();
  if (present(in, 3)) q.zb = in[3].data, q.nzb = in[3].numel();
  const int64_t rows = a.desc.rank() == 1 ? 1 : a.desc.dims[a.desc.rank() - 2];
  if constexpr (kLt)
    return qgemmCuda(p, a.data, b.data, out[0].data, rows, a.desc.dtype, b.desc.dtype, q,
                     k.workspace(), k.workspaceSize(), streamOf(k), k.errorRecord(),
                     "MatMulInteger");
  else
    return qmatmulCuda(p, a.data, b.data, out[0].data, rows, a.desc.dtype, b.desc.dtype, q,
                       streamOf(k), k.errorRecord(), "MatMulInteger");
}

}  // namespace

OPFORGE_TACTICS("ai.onnx::MatMulInteger", [](OpDef& d) {
  qmatmulTactics(d, matmulIntegerCuda<false>, matmulIntegerCuda<true>, 1);
});

}  // namespace opforge::ops
