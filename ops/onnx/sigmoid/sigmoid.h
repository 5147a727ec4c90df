// sigmoid.h — ONNX Sigmoid's elementwise function, for the references of fused ops with a sigmoid
// stage (opforge::FusedGeluChain, opforge::FusedGelu).
#pragma once

#include <cmath>

namespace opforge::ops {

// Sigmoid's reference function, in the compute type: 1 / (1 + e^-x), written so that e^x never
// overflows.
inline constexpr auto kSigmoidFn = [](auto x) {
  using C = decltype(x);
  if (x >= C(0)) return static_cast<C>(C(1) / (C(1) + std::exp(-x)));
  const C e = std::exp(x);
  return static_cast<C>(e / (C(1) + e));
};

}  // namespace opforge::ops
