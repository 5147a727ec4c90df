// CUDA tactics of ai.onnx::Gemm: Y = alpha A' B' + beta C. A C of shape [N] / [1, N] with beta 1
// goes through the bias epilogue; any other C is first broadcast into Y (common/movement.cuh) and
// read back with beta. The shared GEMM tactics (common/gemm_tactics.cuh):
//   1-4 cuda.lt0..3  cuBLASLt heuristic algorithms;  5 cuda.tiled  the tiled kernel (any type).
#include "../common/gemm_tactics.cuh"

namespace opforge::ops {
namespace {

Result<GemmPlan> planOf(const AttrMap& at, std::span<const TensorDesc> in,
                        std::span<const TensorDesc> out) {
  const TensorDesc& y = out[0];
  GemmPlan p;
  p.name = "Gemm";
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
      p.bias_input = 2;
    } else {
      p.c_input = 2;
      g.beta = beta;
    }
  }
  return p;
}

}  // namespace

OPFORGE_TACTICS("ai.onnx::Gemm", [](OpDef& d) { GemmTactics<planOf>::addAll(d); });

}  // namespace opforge::ops
