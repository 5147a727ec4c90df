// FastDivmod (the CUDA tactics' index arithmetic), checked on the host against / and %.
#include <gtest/gtest.h>

#include <random>

#include "ops/contrib/common/fast_divmod.h"

using opforge::contrib::FastDivmod;

TEST(FastDivmod, MatchesIntegerDivision) {
  std::mt19937_64 rng(12);
  std::vector<uint32_t> divisors = {1,
                                    2,
                                    3,
                                    5,
                                    7,
                                    31,
                                    32,
                                    33,
                                    255,
                                    256,
                                    257,
                                    260,
                                    1000,
                                    65535,
                                    65536,
                                    65537,
                                    (1u << 30) - 1,
                                    1u << 30,
                                    (1u << 30) + 1,
                                    (1u << 31) - 1};
  for (int i = 0; i < 200; ++i)
    divisors.push_back(1 + static_cast<uint32_t>(rng() % ((1u << 31) - 1)));
  for (int i = 0; i < 200; ++i) divisors.push_back(1 + static_cast<uint32_t>(rng() % 4096));
  for (uint32_t d : divisors) {
    FastDivmod f(d);
    std::vector<uint32_t> ns = {0, 1, d - 1, d, d + 1, (1u << 31) - 1, (1u << 31) - 2};
    for (int i = 0; i < 2000; ++i) ns.push_back(static_cast<uint32_t>(rng() % (1u << 31)));
    for (uint32_t n : ns) {
      if (n >= (1u << 31)) continue;
      uint32_t q, r;
      f.divmod(n, q, r);
      ASSERT_EQ(q, n / d) << n << " / " << d;
      ASSERT_EQ(r, n % d) << n << " % " << d;
    }
  }
}
