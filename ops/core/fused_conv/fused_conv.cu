// CUDA tactics of opforge::FusedConv: the shared convolution tactics
// (ops/onnx/common/conv_tactics.cuh) — 1-5 cuDNN legacy algorithms (2: bias, residual and ReLU
// inside cudnnConvolutionBiasActivationForward), 6 direct (everything fused), 7-12 cuDNN graph-API
// engines (LINEAR or channels-last; the epilogue inside the engine where cuDNN fuses it). Otherwise
// one epilogue kernel follows the convolution.
#include "../../onnx/common/activation.h"
#include "../../onnx/common/conv_tactics.cuh"

namespace opforge::ops {
namespace {

Result<ConvArgs> fusedConvArgsOf(const AttrMap& at, const TensorDesc& x, const TensorDesc& w,
                                 const TensorDesc& y) {
  OPFORGE_ASSIGN_OR_RETURN(ConvArgs a, convArgsOf(at, x, w, y));
  OPFORGE_ASSIGN_OR_RETURN(a.act, parseAct(at.get<std::string>("activation")));
  return a;
}

}  // namespace

OPFORGE_TACTICS("opforge::FusedConv", [](OpDef& d) {
  ConvTactics<fusedConvArgsOf>::addAll(d, "cuda.dnn.precomp_gemm_fused");
});

}  // namespace opforge::ops
