// circ_pad.h — shared between the CPU reference and the CUDA tactics of example::circ_pad_plugin.
#pragma once

#include <cstdint>
#include <vector>

#include "opforge/op.h"

namespace opforge::contrib {

// Per-dimension padding (before, after) for all N dims, from the seed's `pads` layout
// (pads[2i], pads[2i+1] pad dimension N-1-i).
struct CircPadGeometry {
  int rank = 0;
  std::vector<int64_t> in_dims, out_dims, before;
};

inline CircPadGeometry circPadGeometry(const std::vector<int32_t>& pads,
                                       const std::vector<int64_t>& in_dims) {
  CircPadGeometry g;
  g.rank = static_cast<int>(in_dims.size());
  g.in_dims = in_dims;
  g.out_dims = in_dims;
  g.before.assign(in_dims.size(), 0);
  for (size_t i = 0; i < pads.size() / 2; ++i) {
    const size_t d = in_dims.size() - 1 - i;
    g.before[d] = pads[2 * i];
    g.out_dims[d] += int64_t{pads[2 * i]} + pads[2 * i + 1];  // 64-bit: int32 pads overflow
  }
  return g;
}

// Source coordinate of output coordinate `o` along a dim of input size `n` padded by `before`:
// ((o - before) mod n), the mathematical (non-negative) modulo.
inline int64_t circSource(int64_t o, int64_t before, int64_t n) {
  int64_t s = (o - before) % n;
  return s < 0 ? s + n : s;
}

}  // namespace opforge::contrib
