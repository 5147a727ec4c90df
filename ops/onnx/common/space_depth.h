// space_depth.h — DepthToSpace / SpaceToDepth as one 6-D permutation of (N, C, H, W).
#pragma once

#include "util.h"

namespace opforge::ops {

// y = transpose(reshape(x, in6), perm) with y's 4-D shape; every element is copied once.
inline Status permute6(const Tensor& x, const Tensor& y, const std::vector<int64_t>& in6,
                       const int (&perm)[6], const char* op) {
  const auto st = stridesOf(in6);
  std::vector<int64_t> out6(6), ost(6);
  for (int i = 0; i < 6; ++i) {
    out6[i] = in6[perm[i]];
    ost[i] = st[perm[i]];
  }
  return visitBySize(x.desc.dtype, op, [&](auto num) -> Status {
    using S = typename decltype(num)::S;
    const S* px = static_cast<const S*>(x.data);
    S* py = static_cast<S*>(y.data);
    forEachRun(out6, {ost}, [&](int64_t o, const int64_t* off, int64_t n, const int64_t* s) {
      for (int64_t i = 0; i < n; ++i) py[o + i] = px[off[0] + i * s[0]];
    });
    return Status::ok();
  });
}

}  // namespace opforge::ops
