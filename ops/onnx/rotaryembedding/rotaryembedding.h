// rotaryembedding.h — RotaryEmbedding's geometry and per-element rule, shared by its reference and
// CUDA tactic.
#pragma once

#include <cstdint>

#include "opforge/epilogue.h"  // OPFORGE_HOST_DEVICE

namespace opforge::ops {

// The input as [B, S, H, D] in the order it is stored: 4-D inputs are [B, H, S, D], 3-D ones
// [B, S, H * D]. R: the rotated leading part of each head (even, <= D).
struct RopeGeom {
  int64_t b, s, h, d, r, max_pos;
  bool four_d, interleaved, has_pos;

  // Memory offset of element (b, s, h, d).
  OPFORGE_HOST_DEVICE int64_t offset(int64_t bi, int64_t si, int64_t hi, int64_t di) const {
    return four_d ? ((bi * h + hi) * s + si) * d + di : ((bi * s + si) * h + hi) * d + di;
  }
};

// Output element d (< R) of a head: which cache column, the partner element, and the sign of the
// sine term: y[d] = cos[i] * x[d] + sign * sin[i] * x[partner].
struct RopeTap {
  int64_t i, partner;
  double sign;
};
OPFORGE_HOST_DEVICE inline RopeTap ropeTap(const RopeGeom& g, int64_t di) {
  const int64_t half = g.r / 2;
  if (g.interleaved)
    return (di % 2 == 0) ? RopeTap{di / 2, di + 1, -1.0} : RopeTap{di / 2, di - 1, 1.0};
  return di < half ? RopeTap{di, di + half, -1.0} : RopeTap{di - half, di - half, 1.0};
}

}  // namespace opforge::ops
