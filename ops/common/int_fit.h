// int_fit.h — overflow-safe size products for the applicability checks of CUDA tactics: a kernel
// that indexes in 32 bits, or launches a block per row, applies only where the products it forms
// fit (tensors may hold up to 2^40 elements, so an int32 index or a grid of 2^31 blocks can be
// exceeded by legal shapes).
#pragma once

#include <cstdint>
#include <initializer_list>

namespace opforge::ops {

inline constexpr int64_t kI32Limit = int64_t{1} << 31;

// Whether every factor is >= 0 and their product is below `limit` (false when it overflows int64).
inline bool productBelow(std::initializer_list<int64_t> factors, int64_t limit) {
  int64_t p = 1;
  for (int64_t f : factors)
    if (f < 0 || __builtin_mul_overflow(p, f, &p)) return false;
  return p < limit;
}

}  // namespace opforge::ops
