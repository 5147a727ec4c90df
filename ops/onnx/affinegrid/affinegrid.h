// affinegrid.h — AffineGrid's base grid, shared by its reference and CUDA tactic.
#pragma once

#include <cstdint>

#include "opforge/epilogue.h"  // OPFORGE_HOST_DEVICE

namespace opforge::ops {

// The normalised coordinate of sample i of n along one axis: align_corners, -1 + 2i / (n - 1)
// (the corners, -1 for n = 1); otherwise -1 + (2i + 1) / n (the pixel centres).
OPFORGE_HOST_DEVICE inline double affineBase(int64_t i, int64_t n, bool align) {
  if (align) return n > 1 ? -1.0 + 2.0 * static_cast<double>(i) / static_cast<double>(n - 1) : -1.0;
  return -1.0 + (2.0 * static_cast<double>(i) + 1.0) / static_cast<double>(n);
}

}  // namespace opforge::ops
