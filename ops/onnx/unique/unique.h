// unique.h — Unique's element order, shared by its reference and CUDA tactic: numbers in
// ascending order, NaN equal to NaN and after every number, -0 equal to +0 (numpy's unique).
#pragma once

#include <cmath>
#include <type_traits>

#include "opforge/epilogue.h"  // OPFORGE_HOST_DEVICE

namespace opforge::ops {

template <typename C>
OPFORGE_HOST_DEVICE inline bool uniqueIsNan(C v) {
  if constexpr (std::is_floating_point_v<C>)
    return v != v;
  else
    return false;
}
// -1, 0 or 1: a before, equal to, or after b.
template <typename C>
OPFORGE_HOST_DEVICE inline int uniqueCompare(C a, C b) {
  const bool na = uniqueIsNan(a), nb = uniqueIsNan(b);
  if (na || nb) return na == nb ? 0 : na ? 1 : -1;
  return a < b ? -1 : b < a ? 1 : 0;
}

}  // namespace opforge::ops
