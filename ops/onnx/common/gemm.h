// gemm.h — matrix products for the CPU kernels of MatMul, Gemm, Conv and ConvTranspose.
//
// sgemm() is the fast path: OpenBLAS's cblas_sgemm when opforge is built with it (and the naive
// loop otherwise, or when naive kernels are requested). gemmNaive() is the plain reference: one
// dot product per output element, accumulated in double for floating-point types. Tests compare
// the two (ops/onnx/matmul/matmul_test.cc).
#pragma once

#include <cstdint>
#include <limits>
#include <type_traits>

namespace opforge::ops {

// True when OpenBLAS is compiled in.
bool haveBlas();
// When on, the fast paths fall back to the naive loops (OPFORGE_CPU_NAIVE=1 sets it at start-up).
bool naiveKernels();
void setNaiveKernels(bool on);
// Naive kernels on (or off) for a scope, the previous setting back after it (tests comparing the
// fast paths with the plain loops).
struct ScopedNaiveKernels {
  explicit ScopedNaiveKernels(bool on) : was(naiveKernels()) { setNaiveKernels(on); }
  ~ScopedNaiveKernels() { setNaiveKernels(was); }
  ScopedNaiveKernels(const ScopedNaiveKernels&) = delete;
  ScopedNaiveKernels& operator=(const ScopedNaiveKernels&) = delete;
  bool was;
};

// A double as integer type T, saturated to T's range (NaN: 0), as CUDA's float-to-integer
// conversion does; a plain cast of an out-of-range value is undefined behaviour.
template <typename T>
T saturatingCast(double v) {
  if constexpr (std::is_floating_point_v<T>) {
    return static_cast<T>(v);
  } else {
    if (v != v) return T{0};
    // The largest double below max + 1 (a power of two): the cast of anything under it is exact.
    constexpr double kTop = 2.0 * static_cast<double>(std::numeric_limits<T>::max() / 2 + 1);
    if (v >= kTop) return std::numeric_limits<T>::max();
    if (v <= static_cast<double>(std::numeric_limits<T>::min()))
      return std::numeric_limits<T>::min();
    return static_cast<T>(v);
  }
}

// C[m x n] = alpha * op(A) * op(B) + beta * C, row-major; op(X) = X or X^T; lda/ldb/ldc are the
// row strides of A, B, C as stored. beta == 0 never reads C. Integer products and sums wrap
// around in two's complement (as the CUDA tactics' integer arithmetic and ONNX Runtime do; signed
// overflow would be undefined behaviour), accumulated in 64 bits; with alpha != 1 or beta != 0
// an integer result goes through double and is saturated to T (saturatingCast).
template <typename T>
void gemmNaive(bool ta, bool tb, int64_t m, int64_t n, int64_t k, double alpha, const T* a,
               int64_t lda, const T* b, int64_t ldb, double beta, T* c, int64_t ldc) {
  // Integers accumulate in uint64_t: unsigned arithmetic wraps, and converting the sum back to a
  // signed type is modular (C++20).
  using Acc = std::conditional_t<std::is_floating_point_v<T>, double, uint64_t>;
  using Signed = std::conditional_t<std::is_signed_v<T>, int64_t, uint64_t>;
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      Acc s = 0;
      for (int64_t p = 0; p < k; ++p)
        s += static_cast<Acc>(ta ? a[p * lda + i] : a[i * lda + p]) *
             static_cast<Acc>(tb ? b[j * ldb + p] : b[p * ldb + j]);
      const double sum = std::is_floating_point_v<T> ? static_cast<double>(s)
                                                     : static_cast<double>(static_cast<Signed>(s));
      double v = sum * alpha;
      if (beta != 0) v += beta * static_cast<double>(c[i * ldc + j]);
      if constexpr (std::is_floating_point_v<T>)
        c[i * ldc + j] = static_cast<T>(v);
      else
        c[i * ldc + j] = (alpha == 1 && beta == 0) ? static_cast<T>(s) : saturatingCast<T>(v);
    }
}

void sgemm(bool ta, bool tb, int64_t m, int64_t n, int64_t k, float alpha, const float* a,
           int64_t lda, const float* b, int64_t ldb, float beta, float* c, int64_t ldc);
void dgemm(bool ta, bool tb, int64_t m, int64_t n, int64_t k, double alpha, const double* a,
           int64_t lda, const double* b, int64_t ldb, double beta, double* c, int64_t ldc);

}  // namespace opforge::ops
