// transpose.h — the permutation Transpose's kernels (CPU and CUDA) apply, checked again there: a
// plan's perm and dims are validated by the shape rule at load, but a small integer input (shape
// values) leaves that rule lenient, so the kernels refuse what is not a permutation of the
// input's axes or an output that is not the permuted input.
#pragma once

#include <span>
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

// Whether a permutation leaves every axis where it is.
template <typename I>
bool isIdentityPerm(const std::vector<I>& perm) {
  for (size_t j = 0; j < perm.size(); ++j)
    if (perm[j] != static_cast<I>(j)) return false;
  return true;
}

// The copy a Transpose makes, on the bytes: the input's memory-order dims and the permutation of
// them that gives the output's memory order. Formats (opforge/tensor.h): a channels-last (HWC)
// tensor of rank >= 3 stores axis 1 innermost. A channels-last [N, C, H, W] transposed by (0, 2,
// 3, 1) into a LINEAR [N, H, W, C] is the identity on the bytes, as is the reverse — a view.
struct BytePermute {
  std::vector<int64_t> dims;  // the input's dims in memory order
  std::vector<int> perm;      // output memory axis j is input memory axis perm[j]
  bool identity() const { return isIdentityPerm(perm); }
};

inline BytePermute bytePermute(const TensorDesc& x, const TensorDesc& y,
                               const std::vector<int>& perm) {
  const int r = x.rank();
  const std::vector<int> in_ord = memoryOrder(x.format, r), out_ord = memoryOrder(y.format, r);
  std::vector<int> in_pos(r);  // memory position of each logical input axis
  for (int j = 0; j < r; ++j) in_pos[in_ord[j]] = j;
  BytePermute b;
  b.dims.resize(r);
  b.perm.resize(r);
  for (int j = 0; j < r; ++j) {
    b.dims[j] = x.dims[in_ord[j]];
    b.perm[j] = in_pos[perm[out_ord[j]]];
  }
  return b;
}

// The view tactics' applies(): the Transpose of these descriptions leaves the bytes as they are.
inline bool transposeIsView(const AttrMap& a, std::span<const TensorDesc> in,
                            std::span<const TensorDesc> out) {
  if (in.size() != 1 || out.size() != 1) return false;
  auto perm = transposePerm(a, in[0].rank());
  if (!perm || !checkTransposed(in[0], out[0], *perm).isOk()) return false;
  return bytePermute(in[0], out[0], *perm).identity();
}

}  // namespace opforge::ops
