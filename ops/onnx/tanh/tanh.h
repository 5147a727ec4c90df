// tanh.h — ONNX Tanh's elementwise function, for the references of fused ops with a tanh stage
// (opforge::FusedGeluChain, opforge::FusedGelu).
#pragma once

#include <cmath>

namespace opforge::ops {

// Tanh's reference function, in the compute type.
inline constexpr auto kTanhFn = [](auto x) {
  using C = decltype(x);
  return static_cast<C>(std::tanh(x));
};

}  // namespace opforge::ops
