// dft.h — what ONNX DFT and STFT share: the geometry of one transform along an axis and the
// direct evaluation of one output element (host and device), every sum in double, each twiddle
// from the exact residue (k t mod n) so that large k t lose nothing:
//   forward      X[k] = sum_{t < min(n, L)} x[t] e^{-2 pi i k t / n}          (k < n, or n/2 + 1)
//   inverse      x[t] = 1/n sum_{k < min(n, L)} X[k] e^{+2 pi i k t / n}
//   irfft        (inverse and onesided) x[t] real, from the one-sided X[0..n/2] (missing values
//                zero, the imaginary parts of X[0] and, n even, X[n/2] ignored; as numpy.irfft)
// x of L samples is zero-padded or truncated to n. Real inputs have a last axis of 1, complex ones
// of 2 (real, imaginary).
#pragma once

#include <cmath>
#include <cstdint>

#include "opforge/epilogue.h"

namespace opforge::ops {

struct DftLine {
  int64_t outer = 1, L = 0, inner = 1, n = 0, out_len = 0;
  int in_c = 1, out_c = 2;  // 1 real, 2 complex
  bool inverse = false, onesided = false;
};

// The line geometry of input dims [..., L at `axis`, ..., 1|2]: axis in [-rank, rank - 1)
// (normalized here), n = dft_length when given, else L (irfft: 2 (L - 1)). False for an axis or a
// length outside their range (the shape rule refuses them; kernels clamp).
OPFORGE_HOST_DEVICE inline bool dftLineFrom(const int64_t* dims, int rank, int64_t axis, bool has_n,
                                            int64_t n, bool inverse, bool onesided, DftLine& g) {
  if (axis < 0) axis += rank;
  if (rank < 2 || axis < 0 || axis >= rank - 1) return false;
  g.inverse = inverse, g.onesided = onesided;
  g.L = dims[axis];
  g.in_c = static_cast<int>(dims[rank - 1]);
  g.out_c = inverse && onesided ? 1 : 2;
  g.outer = 1, g.inner = 1;
  for (int a = 0; a < axis; ++a) g.outer *= dims[a];
  for (int a = static_cast<int>(axis) + 1; a < rank - 1; ++a) g.inner *= dims[a];
  g.n = has_n ? n : (inverse && onesided ? 2 * (g.L - 1) : g.L);
  if (g.n < 1) return false;
  g.out_len = !inverse && onesided ? g.n / 2 + 1 : g.n;
  return true;
}

// cos and sin of 2 pi r / n for 0 <= r < n.
OPFORGE_HOST_DEVICE inline void dftTwiddle(int64_t r, int64_t n, double& c, double& s) {
#if defined(__CUDA_ARCH__)
  ::sincospi(2.0 * static_cast<double>(r) / static_cast<double>(n), &s, &c);
#else
  const double a =
      6.283185307179586476925286766559 * static_cast<double>(r) / static_cast<double>(n);
  c = std::cos(a);
  s = std::sin(a);
#endif
}

// Output element (o, k, i) of line geometry g; `load(j)` reads input element j as double.
// Writes re (and im for a complex output).
template <typename Load>
OPFORGE_HOST_DEVICE inline void dftElement(const DftLine& g, int64_t o, int64_t k, int64_t i,
                                           Load load, double& re, double& im) {
  re = 0, im = 0;
  const int64_t n = g.n;
  auto at = [&](int64_t t, int part) { return ((o * g.L + t) * g.inner + i) * g.in_c + part; };
  if (g.inverse && g.onesided) {  // irfft: the Hermitian spectrum of X[0..n/2]
    for (int64_t m = 0; m < n; ++m) {
      const int64_t src = m <= n / 2 ? m : n - m;
      if (src >= g.L) continue;
      double xr = load(at(src, 0)), xi = g.in_c == 2 ? load(at(src, 1)) : 0.0;
      if (src == 0 || (n % 2 == 0 && src == n / 2)) xi = 0;
      if (m > n / 2) xi = -xi;
      double c, s;
      dftTwiddle((m * k) % n, n, c, s);
      re += xr * c - xi * s;
    }
    re /= static_cast<double>(n);
    return;
  }
  const int64_t count = g.L < n ? g.L : n;
  const double sign = g.inverse ? 1.0 : -1.0;
  for (int64_t t = 0; t < count; ++t) {
    const double xr = load(at(t, 0)), xi = g.in_c == 2 ? load(at(t, 1)) : 0.0;
    double c, s;
    dftTwiddle((k * t) % n, n, c, s);
    s *= sign;
    re += xr * c - xi * s;
    im += xr * s + xi * c;
  }
  if (g.inverse) {
    re /= static_cast<double>(n);
    im /= static_cast<double>(n);
  }
}

// STFT frame f of batch b, bin k: sum_{t < fl} w[t] x[b, f * step + t] e^{-2 pi i k t / fl}
// (samples past the signal are zero). `loadx(b, s, part)`, `loadw(t)`.
struct StftGeom {
  int64_t batch = 0, L = 0, frames = 0, bins = 0, fl = 0, step = 1;
  int in_c = 1;
  bool window = false;
};
template <typename LoadX, typename LoadW>
OPFORGE_HOST_DEVICE inline void stftElement(const StftGeom& g, int64_t b, int64_t f, int64_t k,
                                            LoadX loadx, LoadW loadw, double& re, double& im) {
  re = 0, im = 0;
  for (int64_t t = 0; t < g.fl; ++t) {
    const int64_t s = f * g.step + t;
    if (s >= g.L) break;
    const double w = g.window ? loadw(t) : 1.0;
    const double xr = w * loadx(b, s, 0), xi = g.in_c == 2 ? w * loadx(b, s, 1) : 0.0;
    double c, sn;
    dftTwiddle((k * t) % g.fl, g.fl, c, sn);
    sn = -sn;
    re += xr * c - xi * sn;
    im += xr * sn + xi * c;
  }
}

}  // namespace opforge::ops
