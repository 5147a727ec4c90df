// linalg.h — typed matrix products on tensors: FP32 and FP64 go through sgemm / dgemm (OpenBLAS
// when built with it), FP16/BF16 are widened to float, integers use the naive loop (64-bit
// accumulation).
#pragma once

#include "gemm.h"
#include "util.h"

namespace opforge::ops {

// Types MatMul and Gemm accept.
constexpr unsigned kMatTypes = kFloats | kSigned | kUnsigned;

// Y[m x n] = alpha * op(A) op(B) + beta * Y for storage type N (pointers to storage).
template <typename N>
void matmulTyped(bool ta, bool tb, int64_t m, int64_t n, int64_t k, double alpha,
                 const typename N::S* a, int64_t lda, const typename N::S* b, int64_t ldb,
                 double beta, typename N::S* y, int64_t ldy) {
  using S = typename N::S;
  using C = typename N::C;
  if constexpr (std::is_same_v<S, float>) {
    sgemm(ta, tb, m, n, k, static_cast<float>(alpha), a, lda, b, ldb, static_cast<float>(beta), y,
          ldy);
  } else if constexpr (std::is_same_v<S, double>) {
    dgemm(ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, y, ldy);
  } else if constexpr (std::is_same_v<C, float>) {  // FP16 / BF16
    const int64_t ar = ta ? k : m, ac = ta ? m : k, br = tb ? n : k, bc = tb ? k : n;
    std::vector<float> fa(static_cast<size_t>(ar * ac)), fb(static_cast<size_t>(br * bc)),
        fy(static_cast<size_t>(m * n));
    for (int64_t i = 0; i < ar; ++i)
      for (int64_t j = 0; j < ac; ++j) fa[i * ac + j] = N::load(a[i * lda + j]);
    for (int64_t i = 0; i < br; ++i)
      for (int64_t j = 0; j < bc; ++j) fb[i * bc + j] = N::load(b[i * ldb + j]);
    if (beta != 0)
      for (int64_t i = 0; i < m; ++i)
        for (int64_t j = 0; j < n; ++j) fy[i * n + j] = N::load(y[i * ldy + j]);
    sgemm(ta, tb, m, n, k, static_cast<float>(alpha), fa.data(), ac, fb.data(), bc,
          static_cast<float>(beta), fy.data(), n);
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) y[i * ldy + j] = N::store(fy[i * n + j]);
  } else {
    gemmNaive<S>(ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, y, ldy);
  }
}

}  // namespace opforge::ops
