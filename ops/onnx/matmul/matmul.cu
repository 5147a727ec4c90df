// CUDA tactics of ai.onnx::MatMul (common/matmul_plan.h, common/gemm_cuda.cu):
//   1-4 cuda.lt0..3  cuBLASLt, the heuristic's first four algorithms (FP32 without TF32, FP16/BF16
//                    accumulating in FP32, FP64);
//   5   cuda.tiled   the tiled kernel, every type MatMul accepts (integers accumulate in 64 bits).
#include "../common/cuda_common.cuh"
#include "../common/matmul_plan.h"

namespace opforge::ops {
namespace {

template <int kAlgo>  // -1: tiled
Status matmulCuda(KernelContext& k, std::span<const Tensor> in, std::span<const Tensor> out) {
  const Tensor &a = in[0], &b = in[1], &y = out[0];
  if (y.numel() == 0) return Status::ok();
  OPFORGE_ASSIGN_OR_RETURN(MatMulPlan p, planMatMul(a.desc, b.desc, a.desc.dtype));
  const size_t es = dtypeSize(a.desc.dtype);
  if (p.g.k == 0)  // an empty sum: zeros
    return cudaStatus(cudaMemsetAsync(y.data, 0, y.bytes(), streamOf(k)), "MatMul");
  for (size_t c = 0; c < p.a_off.size(); ++c) {
    GemmArgs g = p.g;
    g.a = static_cast<const uint8_t*>(a.data) + p.a_off[c] * es;
    g.b = static_cast<const uint8_t*>(b.data) + p.b_off[c] * es;
    g.y = static_cast<uint8_t*>(y.data) + p.y_off[c] * es;
    if constexpr (kAlgo >= 0)
      OPFORGE_RETURN_IF_ERROR(gemmLt(g, kAlgo, k.workspace(), k.workspaceSize(), k.stream()));
    else
      OPFORGE_RETURN_IF_ERROR(gemmTiled(g, k.stream()));
  }
  return Status::ok();
}

template <int kAlgo>
bool matmulApplies(const AttrMap&, std::span<const TensorDesc> in,
                   std::span<const TensorDesc> out) {
  if (!allLinear(in, out)) return false;
  auto p = planMatMul(in[0], in[1], in[0].dtype);
  if (!p) return false;
  if constexpr (kAlgo >= 0)
    return p->g.k > 0 && gemmLtApplies(p->g, kAlgo);
  else
    return gemmTiledApplies(p->g);
}

size_t ltWorkspace(const AttrMap&, std::span<const TensorDesc>, std::span<const TensorDesc>) {
  return kLtWorkspace;
}

}  // namespace

OPFORGE_TACTICS("ai.onnx::MatMul", [](OpDef& d) {
  d.tactic(1, "cuda.lt0", matmulCuda<0>, matmulApplies<0>, ltWorkspace);
  d.tactic(2, "cuda.lt1", matmulCuda<1>, matmulApplies<1>, ltWorkspace);
  d.tactic(3, "cuda.lt2", matmulCuda<2>, matmulApplies<2>, ltWorkspace);
  d.tactic(4, "cuda.lt3", matmulCuda<3>, matmulApplies<3>, ltWorkspace);
  d.tactic(5, "cuda.tiled", matmulCuda<-1>, matmulApplies<-1>);
});

}  // namespace opforge::ops
