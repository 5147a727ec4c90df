// det.h — Det's LU factorisation, shared by its CPU reference and its CUDA tactics so that all of
// them make the same operations in the same order (and give the same bits).
//
// Gaussian elimination with partial pivoting on a row-major M x M matrix of doubles, in place:
// at step k the pivot is the entry of column k, rows k..M-1, with the largest magnitude (NaN
// counts as the largest, so it propagates; ties go to the lowest row). A zero pivot means a
// singular matrix: the determinant is exactly 0 (no NaN from 0 / 0). Otherwise the rows are
// swapped (the sign flips), det *= pivot, and the rows below are eliminated. The determinant is the
// product of the pivots with the permutation's sign; an empty (0 x 0) matrix has determinant 1.
//
// On the device the products and differences use __dmul_rn / __dsub_rn, which nvcc never fuses
// into an FMA: the host (x86-64, no FMA contraction) and the device then round alike.
#pragma once

#include <cstdint>

#include "opforge/epilogue.h"  // OPFORGE_HOST_DEVICE

namespace opforge::ops {

OPFORGE_HOST_DEVICE inline double detMul(double a, double b) {
#ifdef __CUDA_ARCH__
  return __dmul_rn(a, b);
#else
  return a * b;
#endif
}
OPFORGE_HOST_DEVICE inline double detSub(double a, double b) {
#ifdef __CUDA_ARCH__
  return __dsub_rn(a, b);
#else
  return a - b;
#endif
}

// Whether |a| (row ia) is a better pivot than |b| (row ib): larger, NaN largest, ties to the lower
// row.
OPFORGE_HOST_DEVICE inline bool detBetterPivot(double a, int64_t ia, double b, int64_t ib) {
  const bool na = a != a, nb = b != b;
  if (na != nb) return na;
  if (!na && a != b) return a > b;
  return ia < ib;
}

// The determinant of the m x m matrix `a` (row-major, overwritten).
OPFORGE_HOST_DEVICE inline double luDeterminant(double* a, int64_t m) {
  double det = 1;
  bool negate = false;
  for (int64_t k = 0; k < m; ++k) {
    int64_t p = k;
    double best = a[k * m + k] < 0 ? -a[k * m + k] : a[k * m + k];
    for (int64_t i = k + 1; i < m; ++i) {
      const double v = a[i * m + k] < 0 ? -a[i * m + k] : a[i * m + k];
      if (detBetterPivot(v, i, best, p)) best = v, p = i;
    }
    const double pv = a[p * m + k];
    if (pv == 0) return 0;
    if (p != k) {
      negate = !negate;
      for (int64_t j = k; j < m; ++j) {
        const double t = a[k * m + j];
        a[k * m + j] = a[p * m + j];
        a[p * m + j] = t;
      }
    }
    det = detMul(det, pv);
    for (int64_t i = k + 1; i < m; ++i) {
      const double f = a[i * m + k] / pv;
      for (int64_t j = k + 1; j < m; ++j)
        a[i * m + j] = detSub(a[i * m + j], detMul(f, a[k * m + j]));
    }
  }
  return negate ? -det : det;
}

}  // namespace opforge::ops
