// gemm_lt.cc — the cuBLASLt half of gemm_cuda.h (host code: handles, descriptors, heuristics);
// built with CUDA only. The kernels (activation pass, tiled GEMM) are in gemm_cuda.cu.
#if defined(OPFORGE_WITH_CUDA)

#include <cublasLt.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <map>
#include <mutex>
#include <tuple>
#include <vector>

#include "gemm_cuda.h"

namespace opforge::ops {

namespace {
Status cudaStatus(cudaError_t e, const char* what) {
  if (e == cudaSuccess) return Status::ok();
  return Status::runtime(std::string(what) + ": " + cudaGetErrorName(e) + " (" +
                         cudaGetErrorString(e) + ")");
}
}  // namespace

namespace {

// ---------------------------------------------------------------------------------------------
// cuBLASLt: handles per thread and device, heuristics cached per problem
// ---------------------------------------------------------------------------------------------

Status ltStatus(cublasStatus_t s, const char* what) {
  if (s == CUBLAS_STATUS_SUCCESS) return Status::ok();
  return Status::runtime(std::string("cuBLASLt ") + what + ": " + cublasLtGetStatusName(s) + " (" +
                         cublasLtGetStatusString(s) + ")");
}

struct LtHandles {
  std::map<int, cublasLtHandle_t> by_device;
  ~LtHandles() {
    for (auto& [dev, h] : by_device) (void)cublasLtDestroy(h);
  }
};

Result<cublasLtHandle_t> ltHandle() {
  thread_local LtHandles handles;
  int dev = 0;
  OPFORGE_RETURN_IF_ERROR(cudaStatus(cudaGetDevice(&dev), "cudaGetDevice"));
  auto it = handles.by_device.find(dev);
  if (it != handles.by_device.end()) return it->second;
  // Creation may allocate; allow it even while this thread captures a CUDA graph.
  cudaStreamCaptureMode mode = cudaStreamCaptureModeRelaxed;
  (void)cudaThreadExchangeStreamCaptureMode(&mode);
  cublasLtHandle_t h = nullptr;
  cublasStatus_t s = cublasLtCreate(&h);
  (void)cudaThreadExchangeStreamCaptureMode(&mode);
  OPFORGE_RETURN_IF_ERROR(ltStatus(s, "create"));
  handles.by_device[dev] = h;
  return h;
}

cudaDataType_t cudaTypeOf(DataType t) {
  switch (t) {
    case DataType::kFloat16:
      return CUDA_R_16F;
    case DataType::kBFloat16:
      return CUDA_R_16BF;
    case DataType::kFloat64:
      return CUDA_R_64F;
    case DataType::kInt8:
      return CUDA_R_8I;
    case DataType::kInt32:
      return CUDA_R_32I;
    default:
      return CUDA_R_32F;
  }
}

bool ltType(DataType t) {
  return t == DataType::kFloat32 || t == DataType::kFloat16 || t == DataType::kBFloat16 ||
         t == DataType::kFloat64 || t == DataType::kInt8;
}

// The largest power of two (<= 256) dividing the address.
uint32_t alignmentOf(const void* p) {
  const uintptr_t v = reinterpret_cast<uintptr_t>(p);
  uint32_t a = 256;
  while (a > 1 && v % a) a >>= 1;
  return a;
}

struct LtDescs {
  cublasLtMatmulDesc_t op = nullptr;
  cublasLtMatrixLayout_t la = nullptr, lb = nullptr, lc = nullptr;
  cublasLtMatmulPreference_t pref = nullptr;
  ~LtDescs() {
    if (pref) cublasLtMatmulPreferenceDestroy(pref);
    if (lc) cublasLtMatrixLayoutDestroy(lc);
    if (lb) cublasLtMatrixLayoutDestroy(lb);
    if (la) cublasLtMatrixLayoutDestroy(la);
    if (op) cublasLtMatmulDescDestroy(op);
  }
};

Status layout(cublasLtMatrixLayout_t* l, cudaDataType_t t, int64_t rows, int64_t cols, int64_t ld,
              int64_t batch, int64_t stride) {
  OPFORGE_RETURN_IF_ERROR(ltStatus(cublasLtMatrixLayoutCreate(l, t, static_cast<uint64_t>(rows),
                                                              static_cast<uint64_t>(cols), ld),
                                   "layout"));
  if (batch > 1) {
    const int32_t count = static_cast<int32_t>(batch);
    OPFORGE_RETURN_IF_ERROR(
        ltStatus(cublasLtMatrixLayoutSetAttribute(*l, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &count,
                                                  sizeof(count)),
                 "batch"));
    OPFORGE_RETURN_IF_ERROR(
        ltStatus(cublasLtMatrixLayoutSetAttribute(*l, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET,
                                                  &stride, sizeof(stride)),
                 "batch stride"));
  }
  return Status::ok();
}

// Whether the tanh GELU runs in cuBLASLt's epilogue: not for FP64, whose epilogue misses the
// reference by about 2e-10 (over FP64's tolerance, measured on an H100); applyActivation does it.
bool epilogueGelu(const GemmArgs& g) {
  return g.dtype != DataType::kFloat64;
}

cublasComputeType_t computeOf(const GemmArgs& g) {
  if (g.dtype == DataType::kFloat64) return CUBLAS_COMPUTE_64F;
  if (g.dtype == DataType::kInt8) return CUBLAS_COMPUTE_32I;
  if (g.dtype == DataType::kFloat32 && g.tf32) return CUBLAS_COMPUTE_32F_FAST_TF32;
  return CUBLAS_COMPUTE_32F;
}

// The column-major view: D^T (n x m) = op(B)^T-side x op(A)^T-side; see the header for the roles.
Status describe(const GemmArgs& g, LtDescs& d, const void* bias_for_alignment, uint32_t align_a,
                uint32_t align_b, uint32_t align_y) {
  const cudaDataType_t t = cudaTypeOf(g.dtype);
  const bool f64 = g.dtype == DataType::kFloat64, i8 = g.dtype == DataType::kInt8;
  OPFORGE_RETURN_IF_ERROR(ltStatus(cublasLtMatmulDescCreate(&d.op, computeOf(g),
                                                            f64  ? CUDA_R_64F
                                                            : i8 ? CUDA_R_32I
                                                                 : CUDA_R_32F),
                                   "matmul descriptor"));
  // Lt's "A" is our B, Lt's "B" is our A.
  const cublasOperation_t opa = g.tb ? CUBLAS_OP_T : CUBLAS_OP_N,
                          opb = g.ta ? CUBLAS_OP_T : CUBLAS_OP_N;
  OPFORGE_RETURN_IF_ERROR(
      ltStatus(cublasLtMatmulDescSetAttribute(d.op, CUBLASLT_MATMUL_DESC_TRANSA, &opa, sizeof(opa)),
               "transa"));
  OPFORGE_RETURN_IF_ERROR(
      ltStatus(cublasLtMatmulDescSetAttribute(d.op, CUBLASLT_MATMUL_DESC_TRANSB, &opb, sizeof(opb)),
               "transb"));
  // ReLU and the tanh GELU in cuBLASLt's epilogue, after alpha A B + beta C + bias (the order
  // the residual 1x1 convolutions' GPU cases check); other activations: applyActivation after.
  cublasLtEpilogue_t epi = CUBLASLT_EPILOGUE_DEFAULT;
  const bool relu = g.act == Act::kRelu, gelu = g.act == Act::kGeluTanh && epilogueGelu(g);
  if (bias_for_alignment)
    epi = relu   ? CUBLASLT_EPILOGUE_RELU_BIAS
          : gelu ? CUBLASLT_EPILOGUE_GELU_BIAS
                 : CUBLASLT_EPILOGUE_BIAS;
  else if (relu)
    epi = CUBLASLT_EPILOGUE_RELU;
  else if (gelu)
    epi = CUBLASLT_EPILOGUE_GELU;
  OPFORGE_RETURN_IF_ERROR(ltStatus(
      cublasLtMatmulDescSetAttribute(d.op, CUBLASLT_MATMUL_DESC_EPILOGUE, &epi, sizeof(epi)),
      "epilogue"));
  if (bias_for_alignment) {
    OPFORGE_RETURN_IF_ERROR(
        ltStatus(cublasLtMatmulDescSetAttribute(d.op, CUBLASLT_MATMUL_DESC_BIAS_POINTER,
                                                &bias_for_alignment, sizeof(void*)),
                 "bias"));
    const cudaDataType_t bt = t;
    OPFORGE_RETURN_IF_ERROR(ltStatus(
        cublasLtMatmulDescSetAttribute(d.op, CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE, &bt, sizeof(bt)),
        "bias type"));
  }
  OPFORGE_RETURN_IF_ERROR(
      layout(&d.la, t, g.tb ? g.k : g.n, g.tb ? g.n : g.k, g.ldb, g.batch, g.b_stride));
  OPFORGE_RETURN_IF_ERROR(
      layout(&d.lb, t, g.ta ? g.m : g.k, g.ta ? g.k : g.m, g.lda, g.batch, g.a_stride));
  OPFORGE_RETURN_IF_ERROR(
      layout(&d.lc, cudaTypeOf(gemmOutType(g)), g.n, g.m, g.ldy, g.batch, g.y_stride));
  OPFORGE_RETURN_IF_ERROR(ltStatus(cublasLtMatmulPreferenceCreate(&d.pref), "preference"));
  const uint64_t ws = kLtWorkspace;
  OPFORGE_RETURN_IF_ERROR(
      ltStatus(cublasLtMatmulPreferenceSetAttribute(
                   d.pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws, sizeof(ws)),
               "workspace preference"));
  // FP16/BF16 products accumulate in float: a split-K algorithm may add its partial products in
  // float (COMPUTE_TYPE), not in the output type (INPLACE, OUTPUT_TYPE), which rounded each part
  // to BF16 (a 1x1 convolution 11 BF16 ulps off on the H100).
  if (g.dtype == DataType::kFloat16 || g.dtype == DataType::kBFloat16) {
    const uint32_t mask = CUBLASLT_REDUCTION_SCHEME_COMPUTE_TYPE;
    OPFORGE_RETURN_IF_ERROR(
        ltStatus(cublasLtMatmulPreferenceSetAttribute(
                     d.pref, CUBLASLT_MATMUL_PREF_REDUCTION_SCHEME_MASK, &mask, sizeof(mask)),
                 "reduction scheme preference"));
  }
  // Lt's A is our B and vice versa.
  OPFORGE_RETURN_IF_ERROR(
      ltStatus(cublasLtMatmulPreferenceSetAttribute(
                   d.pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, &align_b, sizeof(align_b)),
               "alignment"));
  OPFORGE_RETURN_IF_ERROR(
      ltStatus(cublasLtMatmulPreferenceSetAttribute(
                   d.pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES, &align_a, sizeof(align_a)),
               "alignment"));
  OPFORGE_RETURN_IF_ERROR(
      ltStatus(cublasLtMatmulPreferenceSetAttribute(
                   d.pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, &align_y, sizeof(align_y)),
               "alignment"));
  OPFORGE_RETURN_IF_ERROR(
      ltStatus(cublasLtMatmulPreferenceSetAttribute(
                   d.pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES, &align_y, sizeof(align_y)),
               "alignment"));
  return Status::ok();
}

// Heuristic results per problem (device, shapes, types, layouts, epilogue, alignments).
using LtKey = std::tuple<int, int, int, int64_t, int64_t, int64_t, int, int, int64_t, int64_t,
                         int64_t, int64_t, int64_t, int64_t, int64_t, int, int, uint32_t, uint32_t,
                         uint32_t, uint32_t, int>;
std::mutex g_lt_mu;
std::map<LtKey, std::vector<cublasLtMatmulAlgo_t>> g_lt_cache;

Result<std::vector<cublasLtMatmulAlgo_t>> heuristics(const GemmArgs& g, const void* bias_ptr,
                                                     uint32_t aa, uint32_t ab, uint32_t ay) {
  int dev = 0;
  OPFORGE_RETURN_IF_ERROR(cudaStatus(cudaGetDevice(&dev), "cudaGetDevice"));
  const uint32_t abias = bias_ptr ? alignmentOf(bias_ptr) : 0;
  const LtKey key{dev,
                  static_cast<int>(g.dtype),
                  static_cast<int>(gemmOutType(g)),
                  g.m,
                  g.n,
                  g.k,
                  g.ta,
                  g.tb,
                  g.lda,
                  g.ldb,
                  g.ldy,
                  g.batch,
                  g.a_stride,
                  g.b_stride,
                  g.y_stride,
                  static_cast<int>(g.act),
                  bias_ptr != nullptr,
                  aa,
                  ab,
                  ay,
                  abias,
                  static_cast<int>(computeOf(g))};
  {
    std::lock_guard<std::mutex> lock(g_lt_mu);
    auto it = g_lt_cache.find(key);
    if (it != g_lt_cache.end()) return it->second;
  }
  OPFORGE_ASSIGN_OR_RETURN(cublasLtHandle_t h, ltHandle());
  LtDescs d;
  OPFORGE_RETURN_IF_ERROR(describe(g, d, bias_ptr, aa, ab, ay));
  cublasLtMatmulHeuristicResult_t res[kLtAlgos];
  int found = 0;
  cublasStatus_t s = cublasLtMatmulAlgoGetHeuristic(h, d.op, d.la, d.lb, d.lc, d.lc, d.pref,
                                                    kLtAlgos, res, &found);
  std::vector<cublasLtMatmulAlgo_t> algos;
  if (s == CUBLAS_STATUS_SUCCESS)
    for (int i = 0; i < found; ++i)
      if (res[i].state == CUBLAS_STATUS_SUCCESS && res[i].workspaceSize <= kLtWorkspace)
        algos.push_back(res[i].algo);
  std::lock_guard<std::mutex> lock(g_lt_mu);
  g_lt_cache[key] = algos;
  return algos;
}

// INT8 inputs only as the quantized products use them: INT32 out, nothing else in the epilogue
// (an INT8 MatMul wraps its INT8 result, which cuBLASLt does not; the tiled kernel takes it).
bool ltTypesOk(const GemmArgs& g) {
  if (g.dtype != DataType::kInt8) return gemmMixedOk(g);
  return gemmOutType(g) == DataType::kInt32 && g.bias == nullptr && g.beta == 0 && g.alpha == 1 &&
         g.act == Act::kNone;
}

bool ltShapeOk(const GemmArgs& g) {
  return ltType(g.dtype) && ltTypesOk(g) && g.m > 0 && g.n > 0 && g.k > 0 && g.batch >= 1 &&
         g.batch < (int64_t{1} << 31) && g.m < (int64_t{1} << 31) && g.n < (int64_t{1} << 31) &&
         g.k < (int64_t{1} << 31) &&
         (g.act == Act::kNone || g.act == Act::kRelu || g.act == Act::kGelu ||
          g.act == Act::kGeluTanh || g.act == Act::kSigmoid || g.act == Act::kTanh ||
          g.act == Act::kSilu);
}

}  // namespace

bool gemmLtApplies(const GemmArgs& g, int algo) {
  if (!ltShapeOk(g)) return false;
  // Build time: assume the engine's 64-byte aligned tensors.
  auto algos =
      heuristics(g, g.bias ? reinterpret_cast<const void*>(uintptr_t{256}) : nullptr, 64, 64, 64);
  return algos && static_cast<int>(algos->size()) > algo;
}

Status gemmLt(const GemmArgs& g, int algo, void* workspace, size_t workspace_size, void* stream) {
  if (g.m == 0 || g.n == 0 || g.batch == 0) return Status::ok();
  if (!ltShapeOk(g)) return Status::unsupported("cuBLASLt: unsupported GEMM (type or sizes)");
  const uint32_t aa = alignmentOf(g.a), ab = alignmentOf(g.b),
                 ay = std::min(alignmentOf(g.y), g.c ? alignmentOf(g.c) : 256u);
  OPFORGE_ASSIGN_OR_RETURN(auto algos, heuristics(g, g.bias, aa, ab, ay));
  if (algos.empty()) return Status::unsupported("cuBLASLt: no algorithm for this GEMM");
  const cublasLtMatmulAlgo_t& a =
      algos[std::min<size_t>(static_cast<size_t>(algo), algos.size() - 1)];
  OPFORGE_ASSIGN_OR_RETURN(cublasLtHandle_t h, ltHandle());
  LtDescs d;
  OPFORGE_RETURN_IF_ERROR(describe(g, d, g.bias, aa, ab, ay));
  const float af = static_cast<float>(g.alpha), bf = static_cast<float>(g.beta);
  const double ad = g.alpha, bd = g.beta;
  const int32_t ai = static_cast<int32_t>(g.alpha), bi = static_cast<int32_t>(g.beta);
  const bool f64 = g.dtype == DataType::kFloat64, i8 = g.dtype == DataType::kInt8;
  const void* alpha = f64  ? static_cast<const void*>(&ad)
                      : i8 ? static_cast<const void*>(&ai)
                           : static_cast<const void*>(&af);
  const void* beta = f64  ? static_cast<const void*>(&bd)
                     : i8 ? static_cast<const void*>(&bi)
                          : static_cast<const void*>(&bf);
  OPFORGE_RETURN_IF_ERROR(ltStatus(
      cublasLtMatmul(h, d.op, alpha, g.b, d.la, g.a, d.lb, beta, g.c ? g.c : g.y, d.lc, g.y, d.lc,
                     &a, workspace, workspace_size, static_cast<cudaStream_t>(stream)),
      "matmul"));
  if (g.act != Act::kNone && g.act != Act::kRelu && !(g.act == Act::kGeluTanh && epilogueGelu(g)))
    return applyActivation(g, stream);
  return Status::ok();
}

}  // namespace opforge::ops

#endif  // OPFORGE_WITH_CUDA
