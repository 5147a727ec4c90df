// GridSample's reflection padding, one definition for the CPU reference (gridsample.cc) and the
// CUDA tactic (gridsample.cu), which must give the same bits however far a coordinate is.
#pragma once

#include <cmath>

#include "opforge/epilogue.h"  // OPFORGE_HOST_DEVICE

namespace opforge::ops::gridsample {

// x mirrored into [lo, hi]. Exact: fmod, 2 * span, and r - span for r in [span, 2 span)
// (Sterbenz) — a floor of d / span times span lost bits to rounding and, on the GPU, to
// contraction into an FMA.
OPFORGE_HOST_DEVICE inline double reflect(double x, double lo, double hi) {
  const double span = hi - lo;
  if (span <= 0) return lo;
  const double r = fmod(fabs(x - lo), 2 * span);
  return r < span ? lo + r : hi - (r - span);
}

}  // namespace opforge::ops::gridsample
