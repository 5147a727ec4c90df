// gelu_reference.h — the CPU references (tactic 0) of the fused GELU nodes: the engine's
// opforge::FusedGeluChain and the contrib library's opforge::FusedGelu (forward), and the forward
// values of opforge::FusedGeluGrad. Each stage is its unfused op's own elementwise function (Gelu,
// Relu, Tanh, Sigmoid, Mul, Add, Div in ops/onnx/), so the oracle shares no code with the fp32
// kernels (gelu_stages.cuh).
#pragma once

#include "../../common/dtype_dispatch.h"
#include "../../onnx/add/add.h"
#include "../../onnx/div/div.h"
#include "../../onnx/gelu/gelu.h"
#include "../../onnx/mul/mul.h"
#include "../../onnx/relu/relu.h"
#include "../../onnx/sigmoid/sigmoid.h"
#include "../../onnx/tanh/tanh.h"
#include "gelu_stages.h"

namespace opforge::gelu {

// Stage `code` of v (operand c) by its unfused op's function, in double.
inline double stageReference(int32_t code, double v, double c) {
  switch (code) {
    case kStageGelu:
      return ops::geluFn(false)(v);
    case kStageGeluTanh:
      return ops::geluFn(true)(v);
    case kStageRelu:
      return ops::kReluFn(v);
    case kStageTanh:
      return ops::kTanhFn(v);
    case kStageSigmoid:
      return ops::kSigmoidFn(v);
    case kStageMul:
      return ops::kMulFn(v, c);
    case kStageAdd:
      return ops::kAddFn(v, c);
    case kStageDiv:
      return ops::kDivFn(v, c);
    default:
      return v;
  }
}

// The whole stage list, every stage in double: the node's result before its one rounding.
inline double stagesReference(const GeluStages& s, double v) {
  for (int k = 0; k < s.n; ++k) v = stageReference(s.code[k], v, s.scalar[k]);
  return v;
}

// dy/dx of the whole stage list at x (chain rule: stageGradRef at the forward values above).
inline double stagesGradReference(const GeluStages& s, double v) {
  double g = 1.0;
  for (int k = 0; k < s.n; ++k) {
    g *= stageGradRef(s.code[k], v, s.scalar[k]);
    v = stageReference(s.code[k], v, s.scalar[k]);
  }
  return g;
}

// The forward reference: every stage in float64 from the input converted once, the result
// rounded once to the storage type (the unfused chain would round after every stage).
inline Status fusedGeluReference(KernelContext& ctx, std::span<const Tensor> in,
                                 std::span<const Tensor> out) {
  const GeluStages s = geluStages(ctx.attrs());
  return ops::visitTypes<ops::kFloats>(in[0].desc.dtype, "FusedGelu", [&](auto num) -> Status {
    using N = decltype(num);
    const auto* x = static_cast<const typename N::S*>(in[0].data);
    auto* y = static_cast<typename N::S*>(out[0].data);
    const int64_t n = in[0].numel();
    for (int64_t i = 0; i < n; ++i)
      y[i] = N::store(
          static_cast<typename N::C>(stagesReference(s, static_cast<double>(N::load(x[i])))));
    return Status::ok();
  });
}

}  // namespace opforge::gelu
