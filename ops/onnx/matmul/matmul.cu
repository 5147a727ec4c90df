// CUDA tactics of ai.onnx::MatMul: the shared GEMM tactics (common/gemm_tactics.cuh) —
//   1-4 cuda.lt0..3  cuBLASLt, the heuristic's first four algorithms (FP32 without TF32, FP16/BF16
//                    accumulating in FP32, FP64);
//   5   cuda.tiled   the tiled kernel, every type MatMul accepts (integers accumulate in 64 bits).
// numpy MatMul as strided-batch GEMMs: common/matmul_plan.h.
#include "../common/gemm_tactics.cuh"

namespace opforge::ops {
namespace {

Result<GemmPlan> planOf(const AttrMap&, std::span<const TensorDesc> in,
                        std::span<const TensorDesc>) {
  OPFORGE_ASSIGN_OR_RETURN(MatMulPlan m, planMatMul(in[0], in[1], in[0].dtype));
  GemmPlan p(std::move(m));
  p.zeros_if_empty = true;
  p.name = "MatMul";
  return p;
}

}  // namespace

OPFORGE_TACTICS("ai.onnx::MatMul", [](OpDef& d) { GemmTactics<planOf>::addAll(d); });

}  // namespace opforge::ops
