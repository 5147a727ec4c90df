#include "gemm.h"

#include <atomic>
#include <cstdlib>
#include <cstring>

#if defined(OPFORGE_WITH_OPENBLAS)
#include <cblas.h>
#endif

namespace opforge::ops {

namespace {
std::atomic<bool>& naiveFlag() {
  static std::atomic<bool> flag{[] {
    const char* e = std::getenv("OPFORGE_CPU_NAIVE");
    return e != nullptr && std::strcmp(e, "0") != 0 && e[0] != '\0';
  }()};
  return flag;
}
}  // namespace

bool haveBlas() {
#if defined(OPFORGE_WITH_OPENBLAS)
  return true;
#else
  return false;
#endif
}
bool naiveKernels() {
  return naiveFlag().load(std::memory_order_relaxed);
}
void setNaiveKernels(bool on) {
  naiveFlag().store(on);
}

namespace {
template <typename T>
void blasGemm(bool ta, bool tb, int64_t m, int64_t n, int64_t k, T alpha, const T* a, int64_t lda,
              const T* b, int64_t ldb, T beta, T* c, int64_t ldc) {
  if (m == 0 || n == 0) return;
#if defined(OPFORGE_WITH_OPENBLAS)
  if (!naiveKernels()) {
    if (k == 0) {
      // BLAS leaves C * beta; make beta == 0 mean "write zeros" as the naive loop does.
      for (int64_t i = 0; i < m; ++i)
        for (int64_t j = 0; j < n; ++j) c[i * ldc + j] = beta == 0 ? T(0) : beta * c[i * ldc + j];
      return;
    }
    const auto gemm = [] {
      if constexpr (std::is_same_v<T, float>)
        return cblas_sgemm;
      else
        return cblas_dgemm;
    }();
    gemm(CblasRowMajor, ta ? CblasTrans : CblasNoTrans, tb ? CblasTrans : CblasNoTrans,
         static_cast<int>(m), static_cast<int>(n), static_cast<int>(k), alpha, a,
         static_cast<int>(lda), b, static_cast<int>(ldb), beta, c, static_cast<int>(ldc));
    return;
  }
#endif
  gemmNaive<T>(ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}
}  // namespace

void sgemm(bool ta, bool tb, int64_t m, int64_t n, int64_t k, float alpha, const float* a,
           int64_t lda, const float* b, int64_t ldb, float beta, float* c, int64_t ldc) {
  blasGemm<float>(ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}

void dgemm(bool ta, bool tb, int64_t m, int64_t n, int64_t k, double alpha, const double* a,
           int64_t lda, const double* b, int64_t ldb, double beta, double* c, int64_t ldc) {
  blasGemm<double>(ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}

}  // namespace opforge::ops
