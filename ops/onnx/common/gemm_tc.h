// gemm_tc.h — the operand rule opforge's tensor-core GEMM kernels share (gemm_mma.cu,
// gemm_skinny.cu): FP16/BF16 in and out, A not transposed, no TF32 request, a non-empty product,
// and N, K, the leading dimensions and the batch strides multiples of 8 elements (16-byte chunks of
// a row are wholly in or out of the matrix).
#pragma once

#include "gemm_cuda.h"

namespace opforge::ops {

inline bool tensorCoreOperandsOk(const GemmArgs& g) {
  const auto mult8 = [](int64_t v) { return v % 8 == 0; };
  return (g.dtype == DataType::kFloat16 || g.dtype == DataType::kBFloat16) &&
         gemmOutType(g) == g.dtype && !g.ta && !g.tf32 && g.m > 0 && g.n > 0 && g.k > 0 &&
         g.batch > 0 && mult8(g.n) && mult8(g.k) && mult8(g.lda) && mult8(g.ldb) && mult8(g.ldy) &&
         mult8(g.a_stride) && mult8(g.b_stride) && mult8(g.y_stride);
}

}  // namespace opforge::ops
