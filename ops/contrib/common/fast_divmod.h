// fast_divmod.h — division of non-negative 32-bit integers by a divisor fixed at launch time, as a
// multiply-high and a shift (the round-up method: m = ceil(2^(31+l) / d) with l = ceil(log2 d)
// gives floor(n / d) = umulhi(n, m) >> (l - 1) for every n < 2^31 and 2 <= d < 2^31).
// Usable on the host (tests) and in CUDA kernels.
#pragma once

#include <cstdint>

#if defined(__CUDACC__)
#define OPFORGE_HD __host__ __device__ __forceinline__
#else
#define OPFORGE_HD inline
#endif

namespace opforge::contrib {

struct FastDivmod {
  uint32_t d = 1, m = 0, shift = 0;

  FastDivmod() = default;
  explicit FastDivmod(uint32_t divisor) : d(divisor) {
    if (d <= 1) return;
    uint32_t l = 0;
    while ((uint64_t{1} << l) < d) ++l;
    m = static_cast<uint32_t>(((uint64_t{1} << (31 + l)) + d - 1) / d);
    shift = l - 1;
  }
  OPFORGE_HD uint32_t div(uint32_t n) const {
    if (d == 1) return n;
#if defined(__CUDA_ARCH__)
    return __umulhi(n, m) >> shift;
#else
    return static_cast<uint32_t>((static_cast<uint64_t>(n) * m) >> 32) >> shift;
#endif
  }
  // q = n / d, r = n % d.
  OPFORGE_HD void divmod(uint32_t n, uint32_t& q, uint32_t& r) const {
    q = div(n);
    r = n - q * d;
  }
};

}  // namespace opforge::contrib
