// roialign.h — RoiAlign's limit on the work that no tensor's size bounds, shared by the reference
// (roialign.cc) and the CUDA tactic (roialign.cu): the samples a bin takes along one axis and the
// rule that every grid must fit under kMaxBinSamples.
#pragma once

#include <cmath>
#include <cstdint>

#include "opforge/epilogue.h"  // OPFORGE_HOST_DEVICE

namespace opforge::ops {

// Samples per bin and axis given by the attribute (at most this many), and samples per bin in all
// (the adaptive count comes from the regions' data).
constexpr int64_t kMaxSamplingRatio = 1024;
constexpr int64_t kMaxBinSamples = int64_t{1} << 20;

// Samples along one axis of a bin `bin` pixels long: sampling_ratio, or ceil(bin) when it is 0.
// `bin` is not NaN (callers refuse such regions first).
OPFORGE_HOST_DEVICE inline double roiAxisSamples(int64_t ratio, double bin) {
  return ratio > 0 ? static_cast<double>(ratio) : ::fmax(0.0, ::ceil(bin));
}

// Whether a gh x gw grid fits; each factor is bounded first, so that both then convert to int64
// (0 x 1e300 passes a bound on the product alone).
OPFORGE_HOST_DEVICE inline bool roiGridFits(double gh, double gw) {
  const auto cap = static_cast<double>(kMaxBinSamples);
  return gh <= cap && gw <= cap && gh * gw <= cap;
}

}  // namespace opforge::ops
