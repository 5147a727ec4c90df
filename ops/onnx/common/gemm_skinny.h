// gemm_skinny.h — opforge's tensor-core GEMM for a short K (gemm_skinny.cu): FP16/BF16 in and
// out, FP32 accumulation, the whole epilogue of GemmArgs (alpha, beta * C with C = GemmArgs::c or
// Y's contents, bias, any activation) before one 16-byte store per 8 columns. Applies when A is
// not transposed, K <= kSkinnyMaxK, and N, K, the leading dimensions and the batch strides are
// multiples of 8 elements; pointers that are not 16-byte aligned take an element-wise path.
//
//   GemmArgs g = ...;  // Y[m, n] = act(A[m, k] B[k, n] + bias), k = 16
//   if (gemmSkinnyApplies(g)) OPFORGE_RETURN_IF_ERROR(gemmSkinny(g, stream));
#pragma once

#include "gemm_cuda.h"

namespace opforge::ops {

constexpr int64_t kSkinnyMaxK = 64;

bool gemmSkinnyApplies(const GemmArgs& g);
// Launches on `stream` (a cudaStream_t); kUnsupported where gemmSkinnyApplies is false.
Status gemmSkinny(const GemmArgs& g, void* stream);

}  // namespace opforge::ops
