// melweightmatrix.h — MelWeightMatrix's arithmetic, shared by its CPU reference and CUDA tactic.
//
// With mel(f) = 2595 log10(1 + f / 700) and its inverse, the num_mel_bins + 2 points
//   mel_k = mel(lower) + k (mel(upper) - mel(lower)) / (num_mel_bins + 2),  k = 0 .. num_mel_bins +
//   1
// (ONNX's reference divides by num_mel_bins + 2, so the last point stays below upper_edge_hertz)
// become spectrogram bins p_k = floor((dft_length + 1) hz(mel_k) / sample_rate). Mel bin i is the
// triangle over (p_i, p_i+1, p_i+2): for spectrogram bin j,
//   j == p_i+1                  1
//   p_i <= j < p_i+1            (j - p_i) / (p_i+1 - p_i)
//   p_i+1 < j < p_i+2           (p_i+2 - j) / (p_i+2 - p_i+1)
//   otherwise                   0
// which is what the reference's two loops leave (the rising edge first, the falling edge over it).
// Computed in double; k * step + mel(lower) is never fused into an FMA on the device (numpy rounds
// the product and the sum apart).
#pragma once

#include <cmath>
#include <cstdint>
#include <string>

#include "opforge/epilogue.h"  // OPFORGE_HOST_DEVICE

namespace opforge::ops {

// The scalar inputs.
struct MelParams {
  int64_t bins = 0, dft = 0, rate = 0;
  double lower = 0, upper = 0;
};

// Spectrogram bin of point k (the inputs valid: melProblem() found nothing).
OPFORGE_HOST_DEVICE inline int64_t melPoint(const MelParams& p, int64_t k) {
  const double ln10 = 2.302585092994045684;  // np.log(10)
  const double lo = 2595 * log1p(p.lower / 700) / ln10, hi = 2595 * log1p(p.upper / 700) / ln10;
  const double step = (hi - lo) / static_cast<double>(p.bins + 2);
#ifdef __CUDA_ARCH__
  const double mel = __dadd_rn(__dmul_rn(static_cast<double>(k), step), lo);
#else
  const double mel = static_cast<double>(k) * step + lo;
#endif
  const double hz = 700 * expm1(mel / 2595 * ln10);
  return static_cast<int64_t>(
      floor(static_cast<double>(p.dft + 1) * hz / static_cast<double>(p.rate)));
}

// The weight of spectrogram bin j in the triangle (l, c, h).
OPFORGE_HOST_DEVICE inline double melWeight(int64_t j, int64_t l, int64_t c, int64_t h) {
  if (j == c) return 1;
  if (l <= j && j < c) return static_cast<double>(j - l) / static_cast<double>(c - l);
  if (c < j && j < h) return static_cast<double>(h - j) / static_cast<double>(h - c);
  return 0;
}

// Which input is bad (-1: none), for the reference's message and the device's report.
OPFORGE_HOST_DEVICE inline int melBadInput(const MelParams& p) {
  if (p.bins <= 0) return 0;
  if (p.dft <= 0) return 1;
  if (p.rate <= 0) return 2;
  if (!(p.lower >= 0) || !(p.lower < p.upper)) return 3;
  if (!(p.upper <= static_cast<double>(p.rate) / 2)) return 4;
  return -1;
}

inline std::string melNumber(double v) {
  std::string s = std::to_string(v);
  while (s.size() > 1 && s.back() == '0') s.pop_back();
  if (!s.empty() && s.back() == '.') s.pop_back();
  return s;
}

// The message for melBadInput(p) == bad.
inline std::string melProblem(const MelParams& p, int bad) {
  switch (bad) {
    case 0:
      return "input 'num_mel_bins' must be > 0, got " + std::to_string(p.bins);
    case 1:
      return "input 'dft_length' must be > 0, got " + std::to_string(p.dft);
    case 2:
      return "input 'sample_rate' must be > 0, got " + std::to_string(p.rate);
    case 3:
      if (!(p.lower >= 0))
        return "input 'lower_edge_hertz' must be >= 0, got " + melNumber(p.lower);
      return "input 'lower_edge_hertz' (" + melNumber(p.lower) +
             ") must be below input 'upper_edge_hertz' (" + melNumber(p.upper) + ")";
    case 4:
      return "input 'upper_edge_hertz' (" + melNumber(p.upper) +
             ") must be at most sample_rate / 2 (" + melNumber(static_cast<double>(p.rate) / 2) +
             ")";
    default:
      return {};
  }
}

}  // namespace opforge::ops
