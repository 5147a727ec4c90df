// wrap.h — integer arithmetic of the CPU references that wraps (two's complement), as ONNX
// Runtime's and numpy's results do, without C++'s undefined signed overflow: integers are
// computed in an unsigned type at least as wide as `unsigned` (narrower ones would be promoted to
// `int` and overflow there), then converted back (modular since C++20). Other types (floating
// point, opforge's half types) use the plain operators.
#pragma once

#include <type_traits>

namespace opforge::ops {

template <typename T, typename U>
inline constexpr bool kWrapInts =
    std::is_integral_v<T>&& std::is_same_v<T, U> && !std::is_same_v<T, bool>;

template <typename T>
using WrapUnsigned =
    std::conditional_t<(sizeof(T) < sizeof(unsigned)), unsigned, std::make_unsigned_t<T>>;

template <typename T, typename U>
constexpr auto wrapAdd(T a, U b) {
  if constexpr (kWrapInts<T, U>)
    return static_cast<T>(static_cast<WrapUnsigned<T>>(a) + static_cast<WrapUnsigned<T>>(b));
  else
    return a + b;
}

template <typename T, typename U>
constexpr auto wrapSub(T a, U b) {
  if constexpr (kWrapInts<T, U>)
    return static_cast<T>(static_cast<WrapUnsigned<T>>(a) - static_cast<WrapUnsigned<T>>(b));
  else
    return a - b;
}

template <typename T, typename U>
constexpr auto wrapMul(T a, U b) {
  if constexpr (kWrapInts<T, U>)
    return static_cast<T>(static_cast<WrapUnsigned<T>>(a) * static_cast<WrapUnsigned<T>>(b));
  else
    return a * b;
}

}  // namespace opforge::ops
