// opforge::ReadValues — what the importer puts before a shape input whose values are run-time data
// (shared by the CPU and CUDA tactics). Spec: README.md.
#pragma once

#include <cstdint>

namespace opforge::ops::read_values {

// At most this many elements: a shape input (sizes, starts, a shape) is a short vector.
inline constexpr int64_t kMaxElements = 64;
// A size tensor holds value + kBias, so that values below 0 (a Slice start counting from the end, a
// box corner left of the image) are sizes too (sizes are never negative); the shape rule gives
// the output's values as size - kBias. Values are clamped to [-kBias, kBias] first: past 2^40 no
// tensor has that many elements, so a Slice end of INT64_MAX and one of 2^40 slice alike.
inline constexpr int64_t kBias = int64_t{1} << 40;

inline int64_t biased(int64_t v) {
  return (v < -kBias ? -kBias : v > kBias ? kBias : v) + kBias;
}

}  // namespace opforge::ops::read_values
