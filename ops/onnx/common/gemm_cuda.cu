#include "gemm_cuda.h"

#include <cublasLt.h>

#include <map>
#include <mutex>
#include <tuple>

#include "cuda_common.cuh"
#include "dmath.cuh"

namespace opforge::ops {

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
    case DataType::kFloat16: return CUDA_R_16F;
    case DataType::kBFloat16: return CUDA_R_16BF;
    case DataType::kFloat64: return CUDA_R_64F;
    default: return CUDA_R_32F;
  }
}

bool ltType(DataType t) {
  return t == DataType::kFloat32 || t == DataType::kFloat16 || t == DataType::kBFloat16 || t == DataType::kFloat64;
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

Status layout(cublasLtMatrixLayout_t* l, cudaDataType_t t, int64_t rows, int64_t cols, int64_t ld, int64_t batch,
              int64_t stride) {
  OPFORGE_RETURN_IF_ERROR(ltStatus(cublasLtMatrixLayoutCreate(l, t, static_cast<uint64_t>(rows),
                                                              static_cast<uint64_t>(cols), ld),
                                   "layout"));
  if (batch > 1) {
    const int32_t count = static_cast<int32_t>(batch);
    OPFORGE_RETURN_IF_ERROR(ltStatus(
        cublasLtMatrixLayoutSetAttribute(*l, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &count, sizeof(count)), "batch"));
    OPFORGE_RETURN_IF_ERROR(ltStatus(
        cublasLtMatrixLayoutSetAttribute(*l, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, &stride, sizeof(stride)),
        "batch stride"));
  }
  return Status::ok();
}

// The column-major view: D^T (n x m) = op(B)^T-side x op(A)^T-side; see the header for the roles.
Status describe(const GemmArgs& g, LtDescs& d, const void* bias_for_alignment, uint32_t align_a, uint32_t align_b,
                uint32_t align_y) {
  const cudaDataType_t t = cudaTypeOf(g.dtype);
  const bool f64 = g.dtype == DataType::kFloat64;
  OPFORGE_RETURN_IF_ERROR(ltStatus(
      cublasLtMatmulDescCreate(&d.op, f64 ? CUBLAS_COMPUTE_64F : CUBLAS_COMPUTE_32F, f64 ? CUDA_R_64F : CUDA_R_32F),
      "matmul descriptor"));
  // Lt's "A" is our B, Lt's "B" is our A.
  const cublasOperation_t opa = g.tb ? CUBLAS_OP_T : CUBLAS_OP_N, opb = g.ta ? CUBLAS_OP_T : CUBLAS_OP_N;
  OPFORGE_RETURN_IF_ERROR(ltStatus(cublasLtMatmulDescSetAttribute(d.op, CUBLASLT_MATMUL_DESC_TRANSA, &opa, sizeof(opa)), "transa"));
  OPFORGE_RETURN_IF_ERROR(ltStatus(cublasLtMatmulDescSetAttribute(d.op, CUBLASLT_MATMUL_DESC_TRANSB, &opb, sizeof(opb)), "transb"));
  cublasLtEpilogue_t epi = CUBLASLT_EPILOGUE_DEFAULT;
  const bool relu = g.act == Act::kRelu;
  if (bias_for_alignment) epi = relu ? CUBLASLT_EPILOGUE_RELU_BIAS : CUBLASLT_EPILOGUE_BIAS;
  else if (relu) epi = CUBLASLT_EPILOGUE_RELU;
  OPFORGE_RETURN_IF_ERROR(ltStatus(cublasLtMatmulDescSetAttribute(d.op, CUBLASLT_MATMUL_DESC_EPILOGUE, &epi, sizeof(epi)), "epilogue"));
  if (bias_for_alignment) {
    OPFORGE_RETURN_IF_ERROR(ltStatus(
        cublasLtMatmulDescSetAttribute(d.op, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &bias_for_alignment, sizeof(void*)), "bias"));
    const cudaDataType_t bt = t;
    OPFORGE_RETURN_IF_ERROR(ltStatus(
        cublasLtMatmulDescSetAttribute(d.op, CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE, &bt, sizeof(bt)), "bias type"));
  }
  OPFORGE_RETURN_IF_ERROR(layout(&d.la, t, g.tb ? g.k : g.n, g.tb ? g.n : g.k, g.ldb, g.batch, g.b_stride));
  OPFORGE_RETURN_IF_ERROR(layout(&d.lb, t, g.ta ? g.m : g.k, g.ta ? g.k : g.m, g.lda, g.batch, g.a_stride));
  OPFORGE_RETURN_IF_ERROR(layout(&d.lc, t, g.n, g.m, g.ldy, g.batch, g.y_stride));
  OPFORGE_RETURN_IF_ERROR(ltStatus(cublasLtMatmulPreferenceCreate(&d.pref), "preference"));
  const uint64_t ws = kLtWorkspace;
  OPFORGE_RETURN_IF_ERROR(ltStatus(cublasLtMatmulPreferenceSetAttribute(d.pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES,
                                                                      &ws, sizeof(ws)),
                                   "workspace preference"));
  // Lt's A is our B and vice versa.
  OPFORGE_RETURN_IF_ERROR(ltStatus(cublasLtMatmulPreferenceSetAttribute(
                                       d.pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, &align_b, sizeof(align_b)),
                                   "alignment"));
  OPFORGE_RETURN_IF_ERROR(ltStatus(cublasLtMatmulPreferenceSetAttribute(
                                       d.pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES, &align_a, sizeof(align_a)),
                                   "alignment"));
  OPFORGE_RETURN_IF_ERROR(ltStatus(cublasLtMatmulPreferenceSetAttribute(
                                       d.pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, &align_y, sizeof(align_y)),
                                   "alignment"));
  OPFORGE_RETURN_IF_ERROR(ltStatus(cublasLtMatmulPreferenceSetAttribute(
                                       d.pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES, &align_y, sizeof(align_y)),
                                   "alignment"));
  return Status::ok();
}

// Heuristic results per problem (device, shapes, types, layouts, epilogue, alignments).
using LtKey = std::tuple<int, int, int64_t, int64_t, int64_t, int, int, int64_t, int64_t, int64_t, int64_t, int64_t,
                         int64_t, int64_t, int, int, uint32_t, uint32_t, uint32_t, uint32_t>;
std::mutex g_lt_mu;
std::map<LtKey, std::vector<cublasLtMatmulAlgo_t>> g_lt_cache;

Result<std::vector<cublasLtMatmulAlgo_t>> heuristics(const GemmArgs& g, const void* bias_ptr, uint32_t aa, uint32_t ab,
                                                      uint32_t ay) {
  int dev = 0;
  OPFORGE_RETURN_IF_ERROR(cudaStatus(cudaGetDevice(&dev), "cudaGetDevice"));
  const uint32_t abias = bias_ptr ? alignmentOf(bias_ptr) : 0;
  const LtKey key{dev, static_cast<int>(g.dtype), g.m, g.n, g.k, g.ta, g.tb, g.lda, g.ldb, g.ldy, g.batch,
                  g.a_stride, g.b_stride, g.y_stride, static_cast<int>(g.act), bias_ptr != nullptr, aa, ab, ay, abias};
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
  cublasStatus_t s = cublasLtMatmulAlgoGetHeuristic(h, d.op, d.la, d.lb, d.lc, d.lc, d.pref, kLtAlgos, res, &found);
  std::vector<cublasLtMatmulAlgo_t> algos;
  if (s == CUBLAS_STATUS_SUCCESS)
    for (int i = 0; i < found; ++i)
      if (res[i].state == CUBLAS_STATUS_SUCCESS && res[i].workspaceSize <= kLtWorkspace) algos.push_back(res[i].algo);
  std::lock_guard<std::mutex> lock(g_lt_mu);
  g_lt_cache[key] = algos;
  return algos;
}

bool ltShapeOk(const GemmArgs& g) {
  return ltType(g.dtype) && g.m > 0 && g.n > 0 && g.k > 0 && g.batch >= 1 && g.batch < (int64_t{1} << 31) &&
         g.m < (int64_t{1} << 31) && g.n < (int64_t{1} << 31) && g.k < (int64_t{1} << 31) &&
         (g.act == Act::kNone || g.act == Act::kRelu || g.act == Act::kGelu || g.act == Act::kGeluTanh ||
          g.act == Act::kSigmoid || g.act == Act::kTanh);
}

}  // namespace

bool gemmLtApplies(const GemmArgs& g, int algo) {
  if (!ltShapeOk(g)) return false;
  // Build time: assume the engine's 64-byte aligned tensors.
  auto algos = heuristics(g, g.bias ? reinterpret_cast<const void*>(uintptr_t{256}) : nullptr, 64, 64, 64);
  return algos && static_cast<int>(algos->size()) > algo;
}

Status gemmLt(const GemmArgs& g, int algo, void* workspace, size_t workspace_size, void* stream) {
  if (g.m == 0 || g.n == 0 || g.batch == 0) return Status::ok();
  if (!ltShapeOk(g)) return Status::unsupported("cuBLASLt: unsupported GEMM (type or sizes)");
  const uint32_t aa = alignmentOf(g.a), ab = alignmentOf(g.b), ay = alignmentOf(g.y);
  OPFORGE_ASSIGN_OR_RETURN(auto algos, heuristics(g, g.bias, aa, ab, ay));
  if (algos.empty()) return Status::unsupported("cuBLASLt: no algorithm for this GEMM");
  const cublasLtMatmulAlgo_t& a = algos[std::min<size_t>(static_cast<size_t>(algo), algos.size() - 1)];
  OPFORGE_ASSIGN_OR_RETURN(cublasLtHandle_t h, ltHandle());
  LtDescs d;
  OPFORGE_RETURN_IF_ERROR(describe(g, d, g.bias, aa, ab, ay));
  const float af = static_cast<float>(g.alpha), bf = static_cast<float>(g.beta);
  const double ad = g.alpha, bd = g.beta;
  const bool f64 = g.dtype == DataType::kFloat64;
  const void* alpha = f64 ? static_cast<const void*>(&ad) : static_cast<const void*>(&af);
  const void* beta = f64 ? static_cast<const void*>(&bd) : static_cast<const void*>(&bf);
  OPFORGE_RETURN_IF_ERROR(ltStatus(cublasLtMatmul(h, d.op, alpha, g.b, d.la, g.a, d.lb, beta, g.y, d.lc, g.y, d.lc, &a,
                                                  workspace, workspace_size, static_cast<cudaStream_t>(stream)),
                                   "matmul"));
  if (g.act != Act::kNone && g.act != Act::kRelu) return applyActivation(g, stream);
  return Status::ok();
}

// ---------------------------------------------------------------------------------------------
// Activations (in place, after the product)
// ---------------------------------------------------------------------------------------------

namespace {
template <typename T>
__device__ __forceinline__ T activate(T v, Act act) {
  switch (act) {
    case Act::kRelu: return v < T(0) ? T(0) : v;
    case Act::kGelu: return T(0.5) * v * (T(1) + dm::erf(v * static_cast<T>(0.7071067811865476)));
    case Act::kGeluTanh:
      return T(0.5) * v * (T(1) + dm::tanh(static_cast<T>(0.7978845608028654) * (v + T(0.044715) * v * v * v)));
    case Act::kSigmoid:
      if (v >= T(0)) return T(1) / (T(1) + dm::exp(-v));
      else {
        const T e = dm::exp(v);
        return e / (T(1) + e);
      }
    case Act::kTanh: return dm::tanh(v);
    default: return v;
  }
}

template <typename S>
__global__ void activationKernel(S* y, int64_t m, int64_t n, int64_t ldy, int64_t batch, int64_t y_stride, Act act) {
  using C = typename DNum<S>::C;
  using T = std::conditional_t<std::is_same_v<C, double>, double, float>;
  const int64_t total = batch * m * n, stride = int64_t(gridDim.x) * blockDim.x;
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < total; i += stride) {
    const int64_t col = i % n, t = i / n, row = t % m, b = t / m;
    S* p = y + b * y_stride + row * ldy + col;
    *p = DNum<S>::store(static_cast<C>(activate(static_cast<T>(DNum<S>::load(*p)), act)));
  }
}
}  // namespace

Status applyActivation(const GemmArgs& g, void* stream) {
  if (g.act == Act::kNone || g.m * g.n * g.batch == 0) return Status::ok();
  auto st = static_cast<cudaStream_t>(stream);
  return visitDevice<kFloats>(g.dtype, "activation", [&](auto tag) -> Status {
    using S = typename decltype(tag)::type;
    activationKernel<S><<<blocksFor(g.batch * g.m * g.n), kThreads, 0, st>>>(static_cast<S*>(g.y), g.m, g.n, g.ldy,
                                                                             g.batch, g.y_stride, g.act);
    return launched("activation");
  });
}

// ---------------------------------------------------------------------------------------------
// Tiled kernel: 64x64 tile of Y per block, 16-deep slices of K through shared memory, 4x4 outputs
// per thread; accumulation in float (FP32/FP16/BF16), double (FP64), int64/uint64 (integers).
// ---------------------------------------------------------------------------------------------

namespace {
constexpr int kTm = 64, kTn = 64, kTk = 16;

template <typename S>
using GemmAcc = std::conditional_t<std::is_same_v<typename DNum<S>::C, double>, double,
                                   std::conditional_t<std::is_floating_point_v<typename DNum<S>::C>, float,
                                                      std::conditional_t<std::is_signed_v<typename DNum<S>::C>,
                                                                         int64_t, uint64_t>>>;

template <typename S>
__global__ void __launch_bounds__(256) tiledGemmKernel(GemmArgs g) {
  using Acc = GemmAcc<S>;
  using C = typename DNum<S>::C;
  __shared__ Acc sa[kTk][kTm];
  __shared__ Acc sb[kTk][kTn];
  const int tx = threadIdx.x % 16, ty = threadIdx.x / 16;
  const int64_t tiles_n = (g.n + kTn - 1) / kTn, tiles_m = (g.m + kTm - 1) / kTm;
  const int64_t tiles = tiles_m * tiles_n;
  const S* A = static_cast<const S*>(g.a);
  const S* B = static_cast<const S*>(g.b);
  S* Y = static_cast<S*>(g.y);
  const S* bias = static_cast<const S*>(g.bias);
  for (int64_t job = blockIdx.x; job < tiles * g.batch; job += gridDim.x) {
    const int64_t bi = job / tiles, t = job - bi * tiles;
    const int64_t m0 = (t / tiles_n) * kTm, n0 = (t % tiles_n) * kTn;
    const S* a = A + bi * g.a_stride;
    const S* b = B + bi * g.b_stride;
    S* y = Y + bi * g.y_stride;
    Acc acc[4][4];
#pragma unroll
    for (int i = 0; i < 4; ++i)
#pragma unroll
      for (int j = 0; j < 4; ++j) acc[i][j] = Acc(0);
    for (int64_t k0 = 0; k0 < g.k; k0 += kTk) {
      // 64x16 of op(A) and 16x64 of op(B): 1024 elements each, 4 per thread.
      for (int e = threadIdx.x; e < kTm * kTk; e += 256) {
        const int mi = e / kTk, ki = e % kTk;
        const int64_t gm = m0 + mi, gk = k0 + ki;
        Acc v = Acc(0);
        if (gm < g.m && gk < g.k) v = static_cast<Acc>(DNum<S>::load(g.ta ? a[gk * g.lda + gm] : a[gm * g.lda + gk]));
        sa[ki][mi] = v;
      }
      for (int e = threadIdx.x; e < kTk * kTn; e += 256) {
        const int ki = e / kTn, ni = e % kTn;
        const int64_t gk = k0 + ki, gn = n0 + ni;
        Acc v = Acc(0);
        if (gn < g.n && gk < g.k) v = static_cast<Acc>(DNum<S>::load(g.tb ? b[gn * g.ldb + gk] : b[gk * g.ldb + gn]));
        sb[ki][ni] = v;
      }
      __syncthreads();
#pragma unroll
      for (int kk = 0; kk < kTk; ++kk) {
        Acc ra[4], rb[4];
#pragma unroll
        for (int i = 0; i < 4; ++i) ra[i] = sa[kk][ty + 16 * i];
#pragma unroll
        for (int j = 0; j < 4; ++j) rb[j] = sb[kk][tx + 16 * j];
#pragma unroll
        for (int i = 0; i < 4; ++i)
#pragma unroll
          for (int j = 0; j < 4; ++j) acc[i][j] += ra[i] * rb[j];
      }
      __syncthreads();
    }
#pragma unroll
    for (int i = 0; i < 4; ++i)
#pragma unroll
      for (int j = 0; j < 4; ++j) {
        const int64_t gm = m0 + ty + 16 * i, gn = n0 + tx + 16 * j;
        if (gm >= g.m || gn >= g.n) continue;
        S* p = y + gm * g.ldy + gn;
        if constexpr (std::is_floating_point_v<C>) {
          using T = std::conditional_t<std::is_same_v<C, double>, double, float>;
          T v = static_cast<T>(acc[i][j]) * static_cast<T>(g.alpha);
          if (g.beta != 0) v += static_cast<T>(g.beta) * static_cast<T>(DNum<S>::load(*p));
          if (bias) v += static_cast<T>(DNum<S>::load(bias[gn]));
          *p = DNum<S>::store(static_cast<C>(activate(v, g.act)));
        } else {
          // Integers: exact when alpha == 1 and beta == 0 (the reference's rule), else via double.
          if (g.alpha == 1 && g.beta == 0 && !bias) {
            *p = static_cast<S>(acc[i][j]);
          } else {
            double v = static_cast<double>(acc[i][j]) * g.alpha;
            if (g.beta != 0) v += g.beta * static_cast<double>(*p);
            if (bias) v += static_cast<double>(bias[gn]);
            *p = static_cast<S>(v);
          }
        }
      }
  }
}
}  // namespace

bool gemmTiledApplies(const GemmArgs& g) {
  return g.dtype != DataType::kBool && g.dtype != DataType::kUndefined && dtypeSize(g.dtype) != 0;
}

Status gemmTiled(const GemmArgs& g, void* stream) {
  if (g.m == 0 || g.n == 0 || g.batch == 0) return Status::ok();
  auto st = static_cast<cudaStream_t>(stream);
  const int64_t jobs = ((g.m + kTm - 1) / kTm) * ((g.n + kTn - 1) / kTn) * g.batch;
  const unsigned grid = static_cast<unsigned>(std::min<int64_t>(jobs, 132 * 16));
  return visitDevice<kFloats | kSigned | kUnsigned>(g.dtype, "GEMM", [&](auto tag) -> Status {
    using S = typename decltype(tag)::type;
    tiledGemmKernel<S><<<grid, 256, 0, st>>>(g);
    return launched("GEMM (tiled)");
  });
}

}  // namespace opforge::ops
