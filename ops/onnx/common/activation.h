// activation.h — the activations the fused ops (opforge::FusedConv, opforge::FusedMatMul) apply
// after their product, in the ops' own spelling: the engine's epilogue vocabulary
// (opforge/epilogue.h) under the names the ONNX ops' code uses.
#pragma once

#include <string>

#include "opforge/epilogue.h"

namespace opforge::ops {

using Act = Activation;

inline Result<Act> parseAct(const std::string& s) {
  return parseActivation(s);
}

// The activation in the compute type (host and device), as the ONNX ops' references compute it.
template <typename T>
OPFORGE_HOST_DEVICE inline T applyAct(T v, Act a) {
  return ::opforge::applyActivation(v, a);
}

}  // namespace opforge::ops
