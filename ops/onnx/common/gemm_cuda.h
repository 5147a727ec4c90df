// gemm_cuda.h — matrix products on the device for MatMul, Gemm, Conv helpers and the fused
// opforge::FusedMatMul: cuBLASLt (FP32, FP16, BF16, FP64; FP32 without TF32, FP16/BF16 accumulate
// in FP32) with its bias/ReLU/GELU epilogues, a tiled kernel for every type (integers too), and
// opforge's tensor-core kernel for FP16/BF16 with every activation in its epilogue (gemm_mma.cu).
//
// Row-major, per product: Y[m x n] = act(alpha * op(A) op(B) + beta * C + bias[n]), op(X) = X or
// X^T. `batch` products at element strides (a stride of 0 broadcasts that operand). C is Y's
// contents on entry (already broadcast to m x n) when beta != 0, or GemmArgs::c (cuBLASLt).
//
// cuBLASLt handles are created lazily, one per thread and device, and live until the thread ends;
// algorithms come from cuBLASLt's heuristics (cached per problem), result `algo` (0-based) is one
// tactic. Workspace comes from the caller (the tactic's WorkspaceFn: kLtWorkspace bytes).
#pragma once

#include <cstdint>

#include "activation.h"
#include "opforge/op.h"

namespace opforge::ops {

struct GemmArgs {
  DataType dtype = DataType::kFloat32;
  int64_t m = 0, n = 0, k = 0;
  bool ta = false, tb = false;
  const void* a = nullptr;
  int64_t lda = 0;  // row stride of A as stored
  const void* b = nullptr;
  int64_t ldb = 0;
  void* y = nullptr;
  int64_t ldy = 0;
  int64_t batch = 1;
  int64_t a_stride = 0, b_stride = 0, y_stride = 0;  // elements between products
  double alpha = 1.0, beta = 0.0;
  // C when it is not Y (cuBLASLt only): read at Y's strides, beta * C added before the bias and
  // activation (a 1x1 convolution's residual). nullptr: C is Y's contents on entry.
  const void* c = nullptr;
  const void* bias = nullptr;  // [n] of dtype, or nullptr
  Act act = Act::kNone;
  bool tf32 = false;  // FP32 products on TF32 tensor cores (cuBLASLt's FAST_TF32 compute type)
  // Y's type when it is not `dtype`: kFloat32 with FP16/BF16 inputs (attention scores kept in
  // float before their softmax), and kInt32 with kInt8 inputs on cuBLASLt (the quantized
  // products, common/qlinear_cuda.cuh); then with no bias, beta or activation.
  DataType y_dtype = DataType::kUndefined;
};

// The type a product of `t` inputs is written in for float arithmetic after it (attention scores
// before their softmax, recurrent projections): float for FP16/BF16, else `t` (GemmArgs::y_dtype).
inline DataType gemmComputeType(DataType t) {
  return t == DataType::kFloat16 || t == DataType::kBFloat16 ? DataType::kFloat32 : t;
}

// The type Y is written in.
inline DataType gemmOutType(const GemmArgs& g) {
  return g.y_dtype == DataType::kUndefined ? g.dtype : g.y_dtype;
}
// Whether the product writes Y in a type other than its inputs' (and that form is one served).
inline bool gemmMixedOk(const GemmArgs& g) {
  if (gemmOutType(g) == g.dtype) return true;
  return gemmOutType(g) == DataType::kFloat32 &&
         (g.dtype == DataType::kFloat16 || g.dtype == DataType::kBFloat16) && g.bias == nullptr &&
         g.beta == 0 && g.act == Act::kNone;
}

constexpr size_t kLtWorkspace = size_t{32} << 20;
constexpr int kLtAlgos = 4;  // heuristic results offered as tactics

// Whether cuBLASLt algorithm `algo` exists for this problem (pointers are not read).
bool gemmLtApplies(const GemmArgs& g, int algo);
Status gemmLt(const GemmArgs& g, int algo, void* workspace, size_t workspace_size, void* stream);
// The tiled kernel: any dtype of MatMul/Gemm (FP32/FP16/BF16/FP64 and integers).
Status gemmTiled(const GemmArgs& g, void* stream);
bool gemmTiledApplies(const GemmArgs& g);

// opforge's tensor-core kernel (gemm_mma.cu): FP16/BF16 in and out, FP32 accumulation, the whole
// epilogue (alpha, beta * C with C = GemmArgs::c or Y's contents, bias, any activation) applied
// before the one store; block tile 128 x `bn` (64 or 128). Applies when A is not transposed, N, K,
// the leading dimensions and the batch strides are multiples of 8 elements.
bool gemmMmaApplies(const GemmArgs& g, int bn);
Status gemmMma(const GemmArgs& g, int bn, void* stream);

// In-place activation over y (m x n rows of stride ldy, `batch` products).
Status applyActivation(const GemmArgs& g, void* stream);

}  // namespace opforge::ops
