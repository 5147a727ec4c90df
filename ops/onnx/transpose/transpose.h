// transpose.h — the permutation Transpose's kernels (CPU and CUDA) apply, checked again there: a
// plan's perm and dims are validated by the shape rule at load, but a small integer input (shape
// values) leaves that rule lenient, so the kernels refuse what is not a permutation of the
// input's axes or an output that is not the permuted input.
#pragma once

#include <string>
#include <vector>

#include "../common/util.h"

namespace opforge::ops {

// perm (default: the axes reversed) as axis numbers in [0, rank), or an error naming the value.
inline Result<std::vector<int>> transposePerm(const AttrMap& a, int rank) {
  std::vector<int> perm(rank);
  if (!a.has("perm")) {
    for (int i = 0; i < rank; ++i) perm[i] = rank - 1 - i;
    return perm;
  }
  const auto p = a.get<std::vector<int64_t>>("perm");
  if (static_cast<int>(p.size()) != rank)
    return Status::invalid("attribute 'perm' has " + std::to_string(p.size()) +
                           " values for an input of rank " + std::to_string(rank));
  std::vector<bool> seen(rank, false);
  for (int i = 0; i < rank; ++i) {
    if (p[i] < -rank || p[i] >= rank)
      return Status::invalid("attribute 'perm' holds " + std::to_string(p[i]) +
                             ", not an axis of rank " + std::to_string(rank));
    perm[i] = wrapAxis(p[i], rank);
    if (seen[perm[i]])
      return Status::invalid("attribute 'perm' is not a permutation (axis " +
                             std::to_string(perm[i]) + " twice)");
    seen[perm[i]] = true;
  }
  return perm;
}

// y must be x with its axes permuted (a plan's dims, edited or damaged, would send the copy out of
// either tensor).
inline Status checkTransposed(const TensorDesc& x, const TensorDesc& y,
                              const std::vector<int>& perm) {
  bool ok = y.rank() == x.rank() && y.dtype == x.dtype;
  for (int i = 0; ok && i < x.rank(); ++i) ok = y.dims[i] == x.dims[perm[i]];
  if (!ok)
    return Status::invalid("output " + describe(y) + " is not input " + describe(x) +
                           " with its axes permuted");
  return Status::ok();
}

}  // namespace opforge::ops
