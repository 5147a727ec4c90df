// relu.h — ONNX Relu's elementwise function, for the references of fused ops with a relu stage
// (opforge::FusedGeluChain, opforge::FusedGelu).
#pragma once

#include <algorithm>

namespace opforge::ops {

// Relu's reference function, in the compute type: branch-free, keeps NaN (max(a, b) is
// a < b ? b : a).
inline constexpr auto kReluFn = [](auto x) {
  using C = decltype(x);
  return std::max(x, C(0));
};

}  // namespace opforge::ops
