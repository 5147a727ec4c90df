// div.h — ONNX Div's elementwise function, for the references of fused ops with a div stage
// (opforge::FusedGeluChain, opforge::FusedGelu).
#pragma once

#include <type_traits>

namespace opforge::ops {

// Div's reference function, in the compute type. Integers divide truncating toward zero (C++ and
// ONNX Runtime); INT_MIN / -1 wraps instead of trapping; Div's kernel rejects a zero divisor.
inline constexpr auto kDivFn = [](auto x, auto y) {
  using C = decltype(x);
  if constexpr (std::is_signed_v<C> && std::is_integral_v<C>)
    if (y == C(-1))
      return static_cast<C>(0 - static_cast<std::make_unsigned_t<C>>(x));  // no INT_MIN / -1 trap
  return static_cast<C>(x / y);
};

}  // namespace opforge::ops
