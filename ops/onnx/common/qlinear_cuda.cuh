// qlinear_cuda.cuh — the device side of ConvInteger, QLinearConv, MatMulInteger and
// QLinearMatMul (common/qlinear.h is the host side): one thread per output element, the 8-bit
// operands minus their zero points multiplied and summed exactly in 32 bits (wrapping as 32-bit
// accumulators do), then written as INT32 or requantized as the CPU reference does: the
// multiplier (s_a * s_b) / s_y rounded in the scales' type after each step, then
// saturate(round_half_even(fp32(acc) * m) + zero_point), the product rounded once in FP32.
#pragma once

#include <optional>
#include <type_traits>

#include "conv_plan.h"
#include "cuda_common.cuh"
#include "matmul_plan.h"
#include "qlinear.h"

namespace opforge::ops {

// What a tactic passes besides the operands: zero points and, for the QLinear ops, the scales and
// the output's zero point. A count of 1 means per tensor; more, per row of A (`za`, `sa`) or per
// column of B / output channel of W (`zb`, `sb`).
struct QParams {
  const void* za = nullptr;  // nullptr: zero
  int64_t nza = 1;
  const void* zb = nullptr;
  int64_t nzb = 1;
  const void* sa = nullptr;  // scales: nullptr for the INT32 ops
  int64_t nsa = 1;
  const void* sb = nullptr;
  int64_t nsb = 1;
  const void* sy = nullptr;
  const void* zy = nullptr;
  DataType ts = DataType::kFloat32;  // the scales' type
  DataType ty = DataType::kInt32;    // the output's type (INT32: no requantization)
  bool relu = false;                 // a folded Relu: y >= zero point (QLinear ops' `_relu`)
};

namespace qdetail {

template <typename TS, typename TY>
struct Requant {
  const TS* sa;
  const TS* sb;
  const TS* sy;
  const TY* zy;
  int64_t nsa, nsb;
  bool relu;

  // acc of row r (of A) and column c (of B, or output channel): the output value.
  __device__ TY operator()(int32_t acc, int64_t r, int64_t c, DeviceErrorRecord* rec) const {
    if constexpr (std::is_same_v<TY, int32_t>) {
      return acc;
    } else {
      using N = DNum<TS>;
      const float ys = N::load(*sy);
      if (ys == 0.0f) {
        reportDeviceError(rec, kDeviceErrorDivZero, 6, 0, 0, 1, -1);
        return TY(0);
      }
      const float ab = N::load(
          N::store(__fmul_rn(N::load(sa[nsa == 1 ? 0 : r]), N::load(sb[nsb == 1 ? 0 : c]))));
      const float m = N::load(N::store(__fdiv_rn(ab, ys)));
      constexpr bool kSigned = std::is_same_v<TY, int8_t>;
      double r =
          static_cast<double>(rintf(__fmul_rn(__int2float_rn(acc), m))) + static_cast<double>(*zy);
      if (relu) r = fmax(r, static_cast<double>(*zy));
      return static_cast<TY>(fmin(fmax(r, kSigned ? -128.0 : 0.0), kSigned ? 127.0 : 255.0));
    }
  }
};

template <typename T>
__device__ __forceinline__ int32_t zeroPoint(const T* z, int64_t n, int64_t i) {
  return z ? static_cast<int32_t>(z[n == 1 ? 0 : i]) : 0;
}

// One strided batch of products: y[bt][r][c] = sum_k (a[bt][r][k] - za) (b[bt][k][c] - zb).
struct QMatDev {
  int64_t m, n, k, lda, ldb, ldy, batch, as, bs, ys, rows;
};

template <typename TA, typename TB, typename TS, typename TY>
__global__ void __launch_bounds__(kThreads)
    qmatmulKernel(QMatDev g, const TA* __restrict__ a, const TB* __restrict__ b,
                  const TA* __restrict__ za, int64_t nza, const TB* __restrict__ zb, int64_t nzb,
                  Requant<TS, TY> q, TY* __restrict__ y, DeviceErrorRecord* rec) {
  const int64_t total = g.batch * g.m * g.n, stride = int64_t(gridDim.x) * blockDim.x;
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < total; i += stride) {
    const int64_t c = i % g.n, t = i / g.n, r = t % g.m, bt = t / g.m;
    const int64_t row = r % g.rows;  // B shared: the batch is folded into the rows
    const TA* ap = a + bt * g.as + r * g.lda;
    const TB* bp = b + bt * g.bs + c;
    const int32_t zar = zeroPoint(za, nza, row), zbc = zeroPoint(zb, nzb, c);
    uint32_t acc = 0;
    for (int64_t kk = 0; kk < g.k; ++kk)
      acc += static_cast<uint32_t>((static_cast<int32_t>(ap[kk]) - zar) *
                                   (static_cast<int32_t>(bp[kk * g.ldb]) - zbc));
    y[bt * g.ys + r * g.ldy + c] = q(static_cast<int32_t>(acc), row, c, rec);
  }
}

struct QConvDev {
  int nd;
  int64_t n, c, m, cg, mg, ip, op, taps;
  int64_t isz[kMaxDims], osz[kMaxDims], k[kMaxDims], s[kMaxDims], d[kMaxDims], pb[kMaxDims];
};

template <typename TX, typename TW, typename TS, typename TY>
__global__ void __launch_bounds__(kThreads)
    qconvKernel(QConvDev g, const TX* __restrict__ x, const TW* __restrict__ w,
                const int32_t* __restrict__ bias, const TX* __restrict__ zx,
                const TW* __restrict__ zw, int64_t nzw, Requant<TS, TY> q, TY* __restrict__ y,
                DeviceErrorRecord* rec) {
  const int64_t total = g.n * g.m * g.op, stride = int64_t(gridDim.x) * blockDim.x;
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < total; i += stride) {
    const int64_t o = i % g.op, t1 = i / g.op, mo = t1 % g.m, b = t1 / g.m;
    int64_t oc[kMaxDims];
    {
      int64_t rem = o;
      for (int a = g.nd - 1; a >= 0; --a) oc[a] = rem % g.osz[a], rem /= g.osz[a];
    }
    const int64_t grp = mo / g.mg;
    const int32_t zxv = zeroPoint(zx, 1, 0), zwv = zeroPoint(zw, nzw, mo);
    uint32_t acc = bias ? static_cast<uint32_t>(bias[mo]) : 0u;
    for (int64_t t = 0; t < g.taps; ++t) {
      int64_t flat = 0, rem = t;
      bool inside = true;
      int64_t jc[kMaxDims];
      for (int a = g.nd - 1; a >= 0; --a) jc[a] = rem % g.k[a], rem /= g.k[a];
      for (int a = 0; a < g.nd && inside; ++a) {
        const int64_t qd = oc[a] * g.s[a] - g.pb[a] + jc[a] * g.d[a];
        inside = qd >= 0 && qd < g.isz[a];
        flat = flat * g.isz[a] + qd;
      }
      if (!inside) continue;
      const TX* xp = x + (b * g.c + grp * g.cg) * g.ip + flat;
      const TW* wp = w + mo * g.cg * g.taps + t;
      for (int64_t ci = 0; ci < g.cg; ++ci)
        acc += static_cast<uint32_t>((static_cast<int32_t>(xp[ci * g.ip]) - zxv) *
                                     (static_cast<int32_t>(wp[ci * g.taps]) - zwv));
    }
    y[i] = q(static_cast<int32_t>(acc), 0, mo, rec);
  }
}

// Calls f(TA, TB, TS, TY) type tags for the operand types, the scales' type (FP32 for the INT32
// ops, which read none) and the output type.
template <typename F>
Status visitQ(DataType ta, DataType tb, const QParams& q, const char* op, F&& f) {
  return visitDevice<kQ8>(ta, op, [&](auto at) -> Status {
    return visitDevice<kQ8>(tb, op, [&](auto bt) -> Status {
      if (q.ty == DataType::kInt32) return f(at, bt, TypeTag<float>{}, TypeTag<int32_t>{});
      return visitDevice<kF32 | kF16 | kBF16>(q.ts, op, [&](auto st) -> Status {
        return visitDevice<kQ8>(q.ty, op, [&](auto yt) -> Status { return f(at, bt, st, yt); });
      });
    });
  });
}

template <typename TS, typename TY>
Requant<TS, TY> requantOf(const QParams& q) {
  return {static_cast<const TS*>(q.sa),
          static_cast<const TS*>(q.sb),
          static_cast<const TS*>(q.sy),
          static_cast<const TY*>(q.zy),
          q.nsa,
          q.nsb,
          q.relu};
}

}  // namespace qdetail

// ---------------------------------------------------------------------------------------------
// Tensor-core path of the products (tactic cuda.lt_int8): one INT8 x INT8 -> INT32 cuBLASLt GEMM
// in the "TN" form its integer kernels take (A [M, K] and B^T [N, K], both K-contiguous), UINT8
// operands shifted to INT8 (v - 128, the zero point shifted with them), then the zero points
// folded in from row sums: sum_k (a_rk - za_r)(b_kc - zb_c) = S_rc - zb_c A_r - za_r B_c +
// K za_r zb_c, wrapping in 32 bits as the direct kernel does.
// ---------------------------------------------------------------------------------------------

namespace qdetail {

template <typename T>
__device__ __forceinline__ int8_t toInt8(T v) {
  if constexpr (std::is_same_v<T, uint8_t>)
    return static_cast<int8_t>(static_cast<int32_t>(v) - 128);
  else
    return v;
}

// a8 [m, k] = A shifted; bt8 [n, k] = B^T shifted (B is [k, n]).
template <typename TA, typename TB>
__global__ void __launch_bounds__(kThreads)
    qshiftKernel(const TA* __restrict__ a, int8_t* __restrict__ a8, int64_t na,
                 const TB* __restrict__ b, int8_t* __restrict__ bt8, int64_t k, int64_t n) {
  const int64_t stride = int64_t(gridDim.x) * blockDim.x;
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < na + k * n; i += stride) {
    if (i < na) {
      if (a8) a8[i] = toInt8(a[i]);
    } else {
      const int64_t j = i - na, c = j / k, kk = j % k;  // bt8[c][kk] = b[kk][c]
      bt8[j] = toInt8(b[kk * n + c]);
    }
  }
}

// sums[r] = sum over the k columns of row r of an INT8 [rows, k] matrix (a template: this header
// is in several translation units).
template <typename T>
__global__ void __launch_bounds__(kThreads)
    qrowSumKernel(const T* __restrict__ x, int32_t* __restrict__ sums, int64_t rows, int64_t k) {
  const int64_t stride = int64_t(gridDim.x) * blockDim.x;
  for (int64_t r = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; r < rows; r += stride) {
    int32_t acc = 0;
    for (int64_t kk = 0; kk < k; ++kk) acc += x[r * k + kk];
    sums[r] = acc;
  }
}

template <typename TA, typename TB, typename TS, typename TY>
__global__ void __launch_bounds__(kThreads)
    qgemmEpilogueKernel(const int32_t* __restrict__ s, const int32_t* __restrict__ arow,
                        const int32_t* __restrict__ bcol, int64_t m, int64_t n, int64_t k,
                        int64_t rows, const TA* __restrict__ za, int64_t nza,
                        const TB* __restrict__ zb, int64_t nzb, Requant<TS, TY> q,
                        TY* __restrict__ y, DeviceErrorRecord* rec) {
  constexpr int32_t kShiftA = std::is_same_v<TA, uint8_t> ? 128 : 0;
  constexpr int32_t kShiftB = std::is_same_v<TB, uint8_t> ? 128 : 0;
  const int64_t stride = int64_t(gridDim.x) * blockDim.x;
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < m * n; i += stride) {
    const int64_t r = i / n, c = i % n, row = r % rows;
    const uint32_t zar = static_cast<uint32_t>(zeroPoint(za, nza, row) - kShiftA);
    const uint32_t zbc = static_cast<uint32_t>(zeroPoint(zb, nzb, c) - kShiftB);
    const uint32_t acc = static_cast<uint32_t>(s[i]) - zbc * static_cast<uint32_t>(arow[r]) -
                         zar * static_cast<uint32_t>(bcol[c]) +
                         static_cast<uint32_t>(k) * zar * zbc;
    y[i] = q(static_cast<int32_t>(acc), row, c, rec);
  }
}

constexpr size_t kQAlign = 256;
inline size_t qalign(size_t b) {
  return (b + kQAlign - 1) / kQAlign * kQAlign;
}

// The one GEMM of plan p, when the tensor-core path takes it: a single product (batches folded
// into M), K and N multiples of 4 (cuBLASLt's integer kernels), under 2^31.
inline std::optional<GemmArgs> qgemmArgs(const MatMulPlan& p) {
  const GemmArgs& g = p.g;
  if (p.a_off.size() != 1 || g.batch != 1 || g.ta || g.tb || g.lda != g.k || g.ldb != g.n ||
      g.ldy != g.n || g.k % 4 != 0 || g.n % 4 != 0 || g.m < 1 || g.m >= (int64_t{1} << 31) ||
      g.n >= (int64_t{1} << 31) || g.k >= (int64_t{1} << 31) || g.m * g.n >= (int64_t{1} << 31))
    return std::nullopt;
  GemmArgs t = g;
  t.dtype = DataType::kInt8;
  t.y_dtype = DataType::kInt32;
  t.tb = true;  // B^T [n, k]
  t.ldb = g.k;
  t.alpha = 1, t.beta = 0;
  return t;
}

// The row sums of the INT8 operands a [t.m, t.k] and bt [t.n, t.k], then s = a bt^T on cuBLASLt
// (lt_workspace: kLtWorkspace bytes).
inline Status qgemmCore(GemmArgs t, const int8_t* a, const int8_t* bt, int32_t* s, int32_t* asum,
                        int32_t* bsum, void* lt_workspace, cudaStream_t st, const char* op) {
  qrowSumKernel<int8_t><<<blocksFor(t.m), kThreads, 0, st>>>(a, asum, t.m, t.k);
  OPFORGE_RETURN_IF_ERROR(launched(op));
  qrowSumKernel<int8_t><<<blocksFor(t.n), kThreads, 0, st>>>(bt, bsum, t.n, t.k);
  OPFORGE_RETURN_IF_ERROR(launched(op));
  t.a = a;
  t.b = bt;
  t.y = s;
  return gemmLt(t, 0, lt_workspace, kLtWorkspace, st);
}

// Workspace: A shifted (UINT8 A only), B^T, S, the row sums, cuBLASLt's own.
inline size_t qgemmWorkspace(const GemmArgs& t, DataType ta) {
  const size_t m = static_cast<size_t>(t.m), n = static_cast<size_t>(t.n),
               k = static_cast<size_t>(t.k);
  return (ta == DataType::kUInt8 ? qalign(m * k) : 0) + qalign(n * k) + qalign(4 * m * n) +
         qalign(4 * m) + qalign(4 * n) + kLtWorkspace;
}

}  // namespace qdetail

// Whether cuda.lt_int8 takes the product of A and B (a cuBLASLt algorithm exists for it).
inline bool qgemmApplies(const TensorDesc& a, const TensorDesc& b) {
  auto p = planMatMul(a, b, a.dtype);
  if (!p.isOk()) return false;
  auto t = qdetail::qgemmArgs(*p);
  return t && gemmLtApplies(*t, 0);
}

inline size_t qgemmWorkspaceOf(const TensorDesc& a, const TensorDesc& b) {
  auto p = planMatMul(a, b, a.dtype);
  if (!p.isOk()) return 0;
  auto t = qdetail::qgemmArgs(*p);
  return t ? qdetail::qgemmWorkspace(*t, a.dtype) : 0;
}

// y = A B on the tensor cores (see above); `rows` is M of A (per-row parameters).
inline Status qgemmCuda(const MatMulPlan& p, const void* a, const void* b, void* y, int64_t rows,
                        DataType ta, DataType tb, const QParams& q, void* workspace,
                        size_t workspace_size, cudaStream_t st, DeviceErrorRecord* rec,
                        const char* op) {
  auto targs = qdetail::qgemmArgs(p);
  if (!targs) return Status::unsupported(std::string(op) + " (cuda.lt_int8): not one TN GEMM");
  GemmArgs t = *targs;
  if (workspace_size < qdetail::qgemmWorkspace(t, ta))
    return Status::internal(std::string(op) + " (cuda.lt_int8): workspace too small");
  const int64_t m = t.m, n = t.n, k = t.k;
  auto* base = static_cast<uint8_t*>(workspace);
  int8_t* a8 = nullptr;
  if (ta == DataType::kUInt8) {
    a8 = reinterpret_cast<int8_t*>(base);
    base += qdetail::qalign(static_cast<size_t>(m * k));
  }
  auto* bt8 = reinterpret_cast<int8_t*>(base);
  base += qdetail::qalign(static_cast<size_t>(n * k));
  auto* s = reinterpret_cast<int32_t*>(base);
  base += qdetail::qalign(static_cast<size_t>(4 * m * n));
  auto* arow = reinterpret_cast<int32_t*>(base);
  base += qdetail::qalign(static_cast<size_t>(4 * m));
  auto* bcol = reinterpret_cast<int32_t*>(base);
  base += qdetail::qalign(static_cast<size_t>(4 * n));
  if (m * n == 0) return Status::ok();
  return qdetail::visitQ(ta, tb, q, op, [&](auto at, auto btag, auto stag, auto yt) -> Status {
    using TA = typename decltype(at)::type;
    using TB = typename decltype(btag)::type;
    using TS = typename decltype(stag)::type;
    using TY = typename decltype(yt)::type;
    const auto* pa = static_cast<const TA*>(a) + p.a_off[0];
    const auto* pb = static_cast<const TB*>(b) + p.b_off[0];
    const int64_t na = a8 ? m * k : 0;
    qdetail::qshiftKernel<TA, TB>
        <<<blocksFor(na + k * n), kThreads, 0, st>>>(pa, a8, na, pb, bt8, k, n);
    OPFORGE_RETURN_IF_ERROR(launched(op));
    const int8_t* a_int8 = a8 ? a8 : reinterpret_cast<const int8_t*>(pa);
    OPFORGE_RETURN_IF_ERROR(qdetail::qgemmCore(t, a_int8, bt8, s, arow, bcol, base, st, op));
    qdetail::qgemmEpilogueKernel<TA, TB, TS, TY><<<blocksFor(m * n), kThreads, 0, st>>>(
        s, arow, bcol, m, n, k, std::max<int64_t>(rows, 1), static_cast<const TA*>(q.za), q.nza,
        static_cast<const TB*>(q.zb), q.nzb, qdetail::requantOf<TS, TY>(q),
        static_cast<TY*>(y) + p.y_off[0], rec);
    return launched(op);
  });
}

// The convolutions on the same GEMM (tactic cuda.lt_int8 of ConvInteger / QLinearConv, group 1):
// columns [P, K] = im2col(x) with padding at x's zero point (so that a padded tap adds
// (zx - zx) (w - zw) = 0), P = N x output positions, K = C x taps; S [P, M] = columns W^T (W is
// [M, K], already K-contiguous); the zero points and the bias folded in as for the products, the
// result written NCHW.

namespace qdetail {

template <typename TX>
__global__ void __launch_bounds__(kThreads)
    qim2colKernel(QConvDev g, const TX* __restrict__ x, const TX* __restrict__ zx,
                  int8_t* __restrict__ cols) {
  const int64_t kdim = g.c * g.taps, total = g.n * g.op * kdim,
                stride = int64_t(gridDim.x) * blockDim.x;
  const TX pad = zx ? *zx : TX(0);
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < total; i += stride) {
    const int64_t kk = i % kdim, p = i / kdim, ci = kk / g.taps, t = kk % g.taps;
    const int64_t o = p % g.op, b = p / g.op;
    int64_t oc[kMaxDims], jc[kMaxDims];
    {
      int64_t rem = o;
      for (int a = g.nd - 1; a >= 0; --a) oc[a] = rem % g.osz[a], rem /= g.osz[a];
      rem = t;
      for (int a = g.nd - 1; a >= 0; --a) jc[a] = rem % g.k[a], rem /= g.k[a];
    }
    int64_t flat = 0;
    bool inside = true;
    for (int a = 0; a < g.nd && inside; ++a) {
      const int64_t q = oc[a] * g.s[a] - g.pb[a] + jc[a] * g.d[a];
      inside = q >= 0 && q < g.isz[a];
      flat = flat * g.isz[a] + q;
    }
    cols[i] = toInt8(inside ? x[(b * g.c + ci) * g.ip + flat] : pad);
  }
}

template <typename TW>
__global__ void __launch_bounds__(kThreads)
    qshiftWeightsKernel(const TW* __restrict__ w, int8_t* __restrict__ w8, int64_t count) {
  const int64_t stride = int64_t(gridDim.x) * blockDim.x;
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < count; i += stride)
    w8[i] = toInt8(w[i]);
}

template <typename TX, typename TW, typename TS, typename TY>
__global__ void __launch_bounds__(kThreads)
    qconvEpilogueKernel(const int32_t* __restrict__ s, const int32_t* __restrict__ xsum,
                        const int32_t* __restrict__ wsum, QConvDev g,
                        const int32_t* __restrict__ bias, const TX* __restrict__ zx,
                        const TW* __restrict__ zw, int64_t nzw, Requant<TS, TY> q,
                        TY* __restrict__ y, DeviceErrorRecord* rec) {
  constexpr int32_t kShiftX = std::is_same_v<TX, uint8_t> ? 128 : 0;
  constexpr int32_t kShiftW = std::is_same_v<TW, uint8_t> ? 128 : 0;
  const int64_t total = g.n * g.m * g.op, kdim = g.c * g.taps,
                stride = int64_t(gridDim.x) * blockDim.x;
  const uint32_t zxs = static_cast<uint32_t>(zeroPoint(zx, 1, 0) - kShiftX);
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < total; i += stride) {
    const int64_t o = i % g.op, t1 = i / g.op, mo = t1 % g.m, b = t1 / g.m, p = b * g.op + o;
    const uint32_t zws = static_cast<uint32_t>(zeroPoint(zw, nzw, mo) - kShiftW);
    uint32_t acc = static_cast<uint32_t>(s[p * g.m + mo]) - zws * static_cast<uint32_t>(xsum[p]) -
                   zxs * static_cast<uint32_t>(wsum[mo]) + static_cast<uint32_t>(kdim) * zxs * zws;
    if (bias) acc += static_cast<uint32_t>(bias[mo]);
    y[i] = q(static_cast<int32_t>(acc), 0, mo, rec);
  }
}

inline QConvDev convDev(const ConvArgs& a) {
  QConvDev g{};
  g.nd = a.nd;
  g.n = a.n, g.c = a.c, g.m = a.m;
  g.cg = a.c / a.group, g.mg = a.m / a.group;
  g.ip = g.op = g.taps = 1;
  for (int i = 0; i < a.nd; ++i) {
    g.isz[i] = a.isz[i], g.osz[i] = a.osz[i], g.k[i] = a.k[i], g.s[i] = a.s[i], g.d[i] = a.d[i];
    g.pb[i] = a.pb[i];
    g.ip *= a.isz[i], g.op *= a.osz[i], g.taps *= a.k[i];
  }
  return g;
}

// The GEMM of a group-1 convolution when cuda.lt_int8 takes it (K and M multiples of 4, sizes
// under 2^31, at most 2 GiB of columns).
inline std::optional<GemmArgs> qconvGemmArgs(const ConvArgs& a) {
  if (a.group != 1 || a.hwc || a.nd < 1 || a.nd > kMaxDims) return std::nullopt;
  const QConvDev g = convDev(a);
  const int64_t p = g.n * g.op, k = g.c * g.taps;
  constexpr int64_t kLim = int64_t{1} << 31;
  if (p < 1 || k % 4 != 0 || g.m % 4 != 0 || p >= kLim || k >= kLim || p * k >= kLim ||
      p * g.m >= kLim / 4)
    return std::nullopt;
  GemmArgs t;
  t.dtype = DataType::kInt8;
  t.y_dtype = DataType::kInt32;
  t.m = p, t.n = g.m, t.k = k;
  t.tb = true;
  t.lda = k, t.ldb = k, t.ldy = g.m;
  return t;
}

inline size_t qconvGemmWorkspace(const GemmArgs& t, DataType tw) {
  const size_t p = static_cast<size_t>(t.m), m = static_cast<size_t>(t.n),
               k = static_cast<size_t>(t.k);
  return qalign(p * k) + (tw == DataType::kUInt8 ? qalign(m * k) : 0) + qalign(4 * p * m) +
         qalign(4 * p) + qalign(4 * m) + kLtWorkspace;
}

}  // namespace qdetail

inline bool qconvGemmApplies(const ConvArgs& a) {
  auto t = qdetail::qconvGemmArgs(a);
  return t && gemmLtApplies(*t, 0);
}

inline size_t qconvGemmWorkspaceOf(const ConvArgs& a, DataType tw) {
  auto t = qdetail::qconvGemmArgs(a);
  return t ? qdetail::qconvGemmWorkspace(*t, tw) : 0;
}

// y = conv(x, w) + bias on the tensor cores (see above), the geometry and pointers of `a`.
inline Status qconvGemmCuda(const ConvArgs& a, const void* bias, DataType tx, DataType tw,
                            const QParams& q, void* workspace, size_t workspace_size,
                            cudaStream_t st, DeviceErrorRecord* rec, const char* op) {
  auto targs = qdetail::qconvGemmArgs(a);
  if (!targs) return Status::unsupported(std::string(op) + " (cuda.lt_int8): not one TN GEMM");
  GemmArgs t = *targs;
  if (workspace_size < qdetail::qconvGemmWorkspace(t, tw))
    return Status::internal(std::string(op) + " (cuda.lt_int8): workspace too small");
  const qdetail::QConvDev g = qdetail::convDev(a);
  const int64_t p = t.m, m = t.n, k = t.k;
  auto* base = static_cast<uint8_t*>(workspace);
  auto* cols = reinterpret_cast<int8_t*>(base);
  base += qdetail::qalign(static_cast<size_t>(p * k));
  int8_t* w8 = nullptr;
  if (tw == DataType::kUInt8) {
    w8 = reinterpret_cast<int8_t*>(base);
    base += qdetail::qalign(static_cast<size_t>(m * k));
  }
  auto* s = reinterpret_cast<int32_t*>(base);
  base += qdetail::qalign(static_cast<size_t>(4 * p * m));
  auto* xsum = reinterpret_cast<int32_t*>(base);
  base += qdetail::qalign(static_cast<size_t>(4 * p));
  auto* wsum = reinterpret_cast<int32_t*>(base);
  base += qdetail::qalign(static_cast<size_t>(4 * m));
  return qdetail::visitQ(tx, tw, q, op, [&](auto xt, auto wt, auto stag, auto yt) -> Status {
    using TX = typename decltype(xt)::type;
    using TW = typename decltype(wt)::type;
    using TS = typename decltype(stag)::type;
    using TY = typename decltype(yt)::type;
    const auto* zx = static_cast<const TX*>(q.za);
    qdetail::qim2colKernel<TX>
        <<<blocksFor(p * k), kThreads, 0, st>>>(g, static_cast<const TX*>(a.x), zx, cols);
    OPFORGE_RETURN_IF_ERROR(launched(op));
    if (w8) {
      qdetail::qshiftWeightsKernel<TW>
          <<<blocksFor(m * k), kThreads, 0, st>>>(static_cast<const TW*>(a.w), w8, m * k);
      OPFORGE_RETURN_IF_ERROR(launched(op));
    }
    const int8_t* wi8 = w8 ? w8 : static_cast<const int8_t*>(a.w);
    OPFORGE_RETURN_IF_ERROR(qdetail::qgemmCore(t, cols, wi8, s, xsum, wsum, base, st, op));
    qdetail::qconvEpilogueKernel<TX, TW, TS, TY><<<blocksFor(p * m), kThreads, 0, st>>>(
        s, xsum, wsum, g, static_cast<const int32_t*>(bias), zx, static_cast<const TW*>(q.zb),
        q.nzb, qdetail::requantOf<TS, TY>(q), static_cast<TY*>(a.y), rec);
    return launched(op);
  });
}

// y = A B (numpy matmul, planned by planMatMul); `rows` is M of A (per-row parameters).
inline Status qmatmulCuda(const MatMulPlan& p, const void* a, const void* b, void* y, int64_t rows,
                          DataType ta, DataType tb, const QParams& q, cudaStream_t st,
                          DeviceErrorRecord* rec, const char* op) {
  const GemmArgs& g = p.g;
  const int64_t total = g.batch * g.m * g.n;
  if (total == 0) return Status::ok();
  const qdetail::QMatDev d{g.m,
                           g.n,
                           g.k,
                           g.lda,
                           g.ldb,
                           g.ldy,
                           g.batch,
                           g.a_stride,
                           g.b_stride,
                           g.y_stride,
                           std::max<int64_t>(rows, 1)};
  return qdetail::visitQ(ta, tb, q, op, [&](auto at, auto bt, auto stag, auto yt) -> Status {
    using TA = typename decltype(at)::type;
    using TB = typename decltype(bt)::type;
    using TS = typename decltype(stag)::type;
    using TY = typename decltype(yt)::type;
    for (size_t call = 0; call < p.a_off.size(); ++call) {
      qdetail::qmatmulKernel<TA, TB, TS, TY><<<blocksFor(total), kThreads, 0, st>>>(
          d, static_cast<const TA*>(a) + p.a_off[call], static_cast<const TB*>(b) + p.b_off[call],
          static_cast<const TA*>(q.za), q.nza, static_cast<const TB*>(q.zb), q.nzb,
          qdetail::requantOf<TS, TY>(q), static_cast<TY*>(y) + p.y_off[call], rec);
      OPFORGE_RETURN_IF_ERROR(launched(op));
    }
    return Status::ok();
  });
}

// y = conv(x, w) + bias (INT32 [M] or nullptr) with the geometry of `a` (its pointers x, w, y).
inline Status qconvCuda(const ConvArgs& a, const void* bias, DataType tx, DataType tw,
                        const QParams& q, cudaStream_t st, DeviceErrorRecord* rec, const char* op) {
  if (a.nd < 1 || a.nd > kMaxDims)
    return Status::unsupported(std::string(op) + " (CUDA): " + std::to_string(a.nd) +
                               " spatial axes (at most " + std::to_string(kMaxDims) + ")");
  const qdetail::QConvDev g = qdetail::convDev(a);
  const int64_t total = g.n * g.m * g.op;
  if (total == 0) return Status::ok();
  return qdetail::visitQ(tx, tw, q, op, [&](auto xt, auto wt, auto stag, auto yt) -> Status {
    using TX = typename decltype(xt)::type;
    using TW = typename decltype(wt)::type;
    using TS = typename decltype(stag)::type;
    using TY = typename decltype(yt)::type;
    qdetail::qconvKernel<TX, TW, TS, TY><<<blocksFor(total), kThreads, 0, st>>>(
        g, static_cast<const TX*>(a.x), static_cast<const TW*>(a.w),
        static_cast<const int32_t*>(bias), static_cast<const TX*>(q.za),
        static_cast<const TW*>(q.zb), q.nzb, qdetail::requantOf<TS, TY>(q), static_cast<TY*>(a.y),
        rec);
    return launched(op);
  });
}

// The tactics of the quantized products (B or W is input `bi`): cuda.direct and cuda.lt_int8.
inline void qmatmulTactics(OpDef& d, KernelFn direct, KernelFn lt, size_t bi) {
  d.tactic(1, "cuda.direct", std::move(direct), linearOnly);
  d.tactic(
      2, "cuda.lt_int8", std::move(lt),
      [bi](const AttrMap& a, std::span<const TensorDesc> in, std::span<const TensorDesc> out) {
        return linearOnly(a, in, out) && qgemmApplies(in[0], in[bi]);
      },
      [bi](const AttrMap&, std::span<const TensorDesc> in, std::span<const TensorDesc>) {
        return qgemmWorkspaceOf(in[0], in[bi]);
      });
}

// The tactics of the quantized convolutions (W is input `wi`): cuda.direct and cuda.lt_int8.
inline void qconvTactics(OpDef& d, KernelFn direct, KernelFn lt, size_t wi) {
  d.tactic(1, "cuda.direct", std::move(direct), linearOnly);
  d.tactic(
      2, "cuda.lt_int8", std::move(lt),
      [wi](const AttrMap& a, std::span<const TensorDesc> in, std::span<const TensorDesc> out) {
        if (!linearOnly(a, in, out)) return false;
        auto c = convArgsOf(a, in[0], in[wi], out[0]);
        return c.isOk() && qconvGemmApplies(*c);
      },
      [wi](const AttrMap& a, std::span<const TensorDesc> in, std::span<const TensorDesc> out) {
        auto c = convArgsOf(a, in[0], in[wi], out[0]);
        return c.isOk() ? qconvGemmWorkspaceOf(*c, in[wi].dtype) : size_t{0};
      });
}

}  // namespace opforge::ops
