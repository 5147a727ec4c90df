// gelu.h — ONNX Gelu's elementwise function, for the references of fused ops with GELU stages
// (opforge::FusedGeluChain, opforge::FusedGelu).
#pragma once

#include "opforge/epilogue.h"

namespace opforge::ops {

// Gelu's reference function f(x) in the compute type (float or double): the erf form, or the tanh
// form when `tanh_form` — the engine's epilogue activations gelu / gelu_tanh (opforge/epilogue.h).
inline auto geluFn(bool tanh_form) {
  const Activation act = tanh_form ? Activation::kGeluTanh : Activation::kGelu;
  return [act](auto x) { return applyActivation(x, act); };
}

}  // namespace opforge::ops
