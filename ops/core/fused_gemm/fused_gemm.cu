// CUDA tactics of opforge::FusedMatMul (ops/onnx/common/gemm_cuda.cu):
//   1-4 cuda.lt0..3  cuBLASLt with the bias (and ReLU) in its epilogue; GELU / sigmoid / tanh in
//   one
//                    pass over the output after it;
//   5   cuda.tiled   the tiled kernel with bias and activation in its epilogue.
#include "../../onnx/common/cuda_common.cuh"
#include "../../onnx/common/matmul_plan.h"

namespace opforge::ops {
namespace {

Result<MatMulPlan> planOf(const AttrMap& at, std::span<const TensorDesc> in) {
  const bool tb = at.get<int64_t>("transB") != 0;
  TensorDesc b = in[1];
  if (tb) std::swap(b.dims[b.rank() - 1], b.dims[b.rank() - 2]);  // the logical B
  OPFORGE_ASSIGN_OR_RETURN(MatMulPlan p, planMatMul(in[0], b, in[0].dtype));
  p.g.tb = tb;
  if (tb) p.g.ldb = p.g.k;
  p.g.alpha = at.get<double>("alpha");
  OPFORGE_ASSIGN_OR_RETURN(p.g.act, parseAct(at.get<std::string>("activation")));
  if (present(in, 2)) p.g.bias = reinterpret_cast<const void*>(uintptr_t{256});
  return p;
}

template <int kAlgo>
Status fusedMatMulCuda(KernelContext& k, std::span<const Tensor> in, std::span<const Tensor> out) {
  const Tensor &a = in[0], &b = in[1], &y = out[0];
  if (y.numel() == 0) return Status::ok();
  std::vector<TensorDesc> d{a.desc, b.desc, hasIn(in, 2) ? in[2].desc : TensorDesc{}};
  OPFORGE_ASSIGN_OR_RETURN(MatMulPlan p, planOf(k.attrs(), d));
  p.g.bias = hasIn(in, 2) ? in[2].data : nullptr;
  const size_t es = dtypeSize(a.desc.dtype);
  for (size_t c = 0; c < p.a_off.size(); ++c) {
    GemmArgs g = p.g;
    g.a = static_cast<const uint8_t*>(a.data) + p.a_off[c] * es;
    g.b = static_cast<const uint8_t*>(b.data) + p.b_off[c] * es;
    g.y = static_cast<uint8_t*>(y.data) + p.y_off[c] * es;
    if (kAlgo >= 0 && g.k > 0)
      OPFORGE_RETURN_IF_ERROR(gemmLt(g, kAlgo, k.workspace(), k.workspaceSize(), k.stream()));
    else
      OPFORGE_RETURN_IF_ERROR(gemmTiled(g, k.stream()));
  }
  return Status::ok();
}

template <int kAlgo>
bool fusedMatMulApplies(const AttrMap& at, std::span<const TensorDesc> in,
                        std::span<const TensorDesc> out) {
  if (!allLinear(in, out)) return false;
  auto p = planOf(at, in);
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

OPFORGE_TACTICS("opforge::FusedMatMul", [](OpDef& d) {
  d.tactic(1, "cuda.lt0", fusedMatMulCuda<0>, fusedMatMulApplies<0>, ltWorkspace);
  d.tactic(2, "cuda.lt1", fusedMatMulCuda<1>, fusedMatMulApplies<1>, ltWorkspace);
  d.tactic(3, "cuda.lt2", fusedMatMulCuda<2>, fusedMatMulApplies<2>, ltWorkspace);
  d.tactic(4, "cuda.lt3", fusedMatMulCuda<3>, fusedMatMulApplies<3>, ltWorkspace);
  d.tactic(5, "cuda.tiled", fusedMatMulCuda<-1>, fusedMatMulApplies<-1>);
});

}  // namespace opforge::ops
