// CUDA tactics of opforge::FusedMatMul: the shared GEMM tactics
// (ops/onnx/common/gemm_tactics.cuh, kernels ops/onnx/common/gemm_cuda.cu) —
//   1-4 cuda.lt0..3  cuBLASLt with the bias (and ReLU) in its epilogue, the residual as its C;
//                    GELU / sigmoid / tanh in one pass over the output after it;
//   5   cuda.tiled   the tiled kernel with bias and activation in its epilogue.
#include "../../onnx/common/gemm_tactics.cuh"

namespace opforge::ops {
namespace {

Result<GemmPlan> planOf(const AttrMap& at, std::span<const TensorDesc> in,
                        std::span<const TensorDesc>) {
  const bool tb = at.get<int64_t>("transB") != 0;
  TensorDesc b = in[1];
  if (tb) std::swap(b.dims[b.rank() - 1], b.dims[b.rank() - 2]);  // the logical B
  OPFORGE_ASSIGN_OR_RETURN(MatMulPlan m, planMatMul(in[0], b, in[0].dtype));
  GemmPlan p(std::move(m));
  p.name = "FusedMatMul";
  p.g.tb = tb;
  if (tb) p.g.ldb = p.g.k;
  p.g.alpha = at.get<double>("alpha");
  OPFORGE_ASSIGN_OR_RETURN(p.g.act, parseAct(at.get<std::string>("activation")));
  if (present(in, 2)) p.bias_input = 2;
  if (present(in, 3)) p.residual_input = 3;
  return p;
}

}  // namespace

OPFORGE_TACTICS("opforge::FusedMatMul", [](OpDef& d) { GemmTactics<planOf>::addAll(d); });

}  // namespace opforge::ops
