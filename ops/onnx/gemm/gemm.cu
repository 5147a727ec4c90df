// CUDA tactics of ai.onnx::Gemm: Y = alpha A' B' + beta C. A C of shape [N] / [1, N] with beta 1
// goes through the bias epilogue; any other C is first broadcast into Y (common/movement.cuh) and
// read back with beta.
//   1-4 cuda.lt0..3  cuBLASLt heuristic algorithms;  5 cuda.tiled  the tiled kernel (any type).
#include "../common/gemm_cuda.h"
#include "../common/movement.cuh"

namespace opforge::ops {
namespace {

struct GemmPlan {
  GemmArgs g;
  bool bias = false;         // C as the epilogue's bias vector
  bool broadcast_c = false;  // C copied into Y first
};

GemmPlan planGemm(const AttrMap& at, std::span<const TensorDesc> in, const TensorDesc& y) {
  GemmPlan p;
  GemmArgs& g = p.g;
  g.dtype = in[0].dtype;
  g.ta = at.get<int64_t>("transA") != 0;
  g.tb = at.get<int64_t>("transB") != 0;
  g.m = y.dims[0];
  g.n = y.dims[1];
  g.k = g.ta ? in[0].dims[0] : in[0].dims[1];
  g.lda = in[0].dims[1];
  g.ldb = in[1].dims[1];
  g.ldy = g.n;
  g.alpha = at.get<double>("alpha");
  const double beta = at.get<double>("beta");
  const bool has_c = in.size() > 2 && in[2].dtype != DataType::kUndefined && beta != 0;
  if (has_c) {
    const auto& cd = in[2].dims;
    const bool row =
        (cd.size() == 1 && cd[0] == g.n) || (cd.size() == 2 && cd[0] == 1 && cd[1] == g.n);
    if (row && beta == 1) {
      p.bias = true;
    } else {
      p.broadcast_c = true;
      g.beta = beta;
    }
  }
  return p;
}

template <int kAlgo>
Status gemmCuda(KernelContext& k, std::span<const Tensor> in, std::span<const Tensor> out) {
  const Tensor& y = out[0];
  if (y.numel() == 0) return Status::ok();
  std::vector<TensorDesc> d;
  for (const auto& t : in) d.push_back(t.desc);
  GemmPlan p = planGemm(k.attrs(), d, y.desc);
  GemmArgs& g = p.g;
  g.a = in[0].data;
  g.b = in[1].data;
  g.y = y.data;
  cudaStream_t st = streamOf(k);
  if (p.bias) g.bias = in[2].data;
  if (p.broadcast_c)
    OPFORGE_RETURN_IF_ERROR(
        launchStridedCopy(in[2].data, y.data, dtypeSize(y.desc.dtype), y.desc.dims,
                          broadcastStrides(in[2].desc.dims, y.desc.dims), 0, st, "Gemm"));
  if (g.k == 0) return gemmTiled(g, k.stream());  // beta * C + bias: no product to take
  if constexpr (kAlgo >= 0)
    return gemmLt(g, kAlgo, k.workspace(), k.workspaceSize(), k.stream());
  else
    return gemmTiled(g, k.stream());
}

template <int kAlgo>
bool gemmApplies(const AttrMap& a, std::span<const TensorDesc> in,
                 std::span<const TensorDesc> out) {
  if (!allLinear(in, out)) return false;
  GemmPlan p = planGemm(a, in, out[0]);
  if (p.bias) p.g.bias = reinterpret_cast<const void*>(uintptr_t{256});
  if constexpr (kAlgo >= 0)
    return p.g.k > 0 && gemmLtApplies(p.g, kAlgo);
  else
    return gemmTiledApplies(p.g);
}

size_t ltWorkspace(const AttrMap&, std::span<const TensorDesc>, std::span<const TensorDesc>) {
  return kLtWorkspace;
}

}  // namespace

OPFORGE_TACTICS("ai.onnx::Gemm", [](OpDef& d) {
  d.tactic(1, "cuda.lt0", gemmCuda<0>, gemmApplies<0>, ltWorkspace);
  d.tactic(2, "cuda.lt1", gemmCuda<1>, gemmApplies<1>, ltWorkspace);
  d.tactic(3, "cuda.lt2", gemmCuda<2>, gemmApplies<2>, ltWorkspace);
  d.tactic(4, "cuda.lt3", gemmCuda<3>, gemmApplies<3>, ltWorkspace);
  d.tactic(5, "cuda.tiled", gemmCuda<-1>, gemmApplies<-1>);
});

}  // namespace opforge::ops
