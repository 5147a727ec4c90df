// bitshift.h — BitShift's element function, shared by the CPU reference and the CUDA tactic.
#pragma once

#include <type_traits>

#include "opforge/epilogue.h"  // OPFORGE_HOST_DEVICE

namespace opforge::ops {

// x << y (left) or x >> y, as ONNX BitShift (opset 28) defines it for every shift amount: a
// shift by a negative amount or by the bit width or more gives 0, except a right shift of a
// negative x, which gives -1 (all sign bits); a signed right shift is arithmetic, and a signed left
// shift drops the bits it moves past the sign bit.
template <typename C>
OPFORGE_HOST_DEVICE inline C bitShift(C x, C y, bool left) {
  using U = std::make_unsigned_t<C>;
  constexpr C kBits = static_cast<C>(sizeof(C) * 8);
  if constexpr (std::is_signed_v<C>) {
    if (y < 0 || y >= kBits) return static_cast<C>(!left && x < 0 ? -1 : 0);
  } else {
    if (y >= kBits) return C(0);
  }
  if (left) return static_cast<C>(static_cast<U>(static_cast<U>(x) << y));
  return static_cast<C>(x >> y);  // arithmetic for a signed x (C++20)
}

}  // namespace opforge::ops
