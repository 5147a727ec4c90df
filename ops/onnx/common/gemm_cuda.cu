#include "gemm_cuda.h"

#include "cuda_common.cuh"
#include "dmath.cuh"
#include "gemm_act.cuh"

namespace opforge::ops {

// ---------------------------------------------------------------------------------------------
// Activations (in place, after the product)
// ---------------------------------------------------------------------------------------------

namespace {

template <typename S>
__global__ void activationKernel(S* y, int64_t m, int64_t n, int64_t ldy, int64_t batch,
                                 int64_t y_stride, Act act) {
  using C = typename DNum<S>::C;
  using T = std::conditional_t<std::is_same_v<C, double>, double, float>;
  const int64_t total = batch * m * n, stride = int64_t(gridDim.x) * blockDim.x;
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < total; i += stride) {
    const int64_t col = i % n, t = i / n, row = t % m, b = t / m;
    S* p = y + b * y_stride + row * ldy + col;
    *p = DNum<S>::store(static_cast<C>(gemmAct<S>(static_cast<T>(DNum<S>::load(*p)), act)));
  }
}
// Y contiguous (rows of n back to back, products back to back): V elements a thread through one
// 16-byte access, no index arithmetic (the general kernel's four 64-bit divisions an element made
// the GELU after ViT-B/16's first MLP GEMM take twice the GEMM's time).
template <typename S, int V>
__global__ void __launch_bounds__(kThreads) activationVecKernel(S* y, int64_t vecs, Act act) {
  using C = typename DNum<S>::C;
  using T = std::conditional_t<std::is_same_v<C, double>, double, float>;
  using Pack = Vec<S, V>;
  const int64_t stride = int64_t(gridDim.x) * blockDim.x;
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < vecs; i += stride) {
    Pack p = reinterpret_cast<const Pack*>(y)[i];
    for (int e = 0; e < V; ++e)
      p.v[e] =
          DNum<S>::store(static_cast<C>(gemmAct<S>(static_cast<T>(DNum<S>::load(p.v[e])), act)));
    reinterpret_cast<Pack*>(y)[i] = p;
  }
}
}  // namespace

Status applyActivation(const GemmArgs& g, void* stream) {
  if (g.act == Act::kNone || g.m * g.n * g.batch == 0) return Status::ok();
  auto st = static_cast<cudaStream_t>(stream);
  const int64_t total = g.batch * g.m * g.n;
  const bool contiguous = g.ldy == g.n && (g.batch == 1 || g.y_stride == g.m * g.n);
  return visitDevice<kFloats>(g.dtype, "activation", [&](auto tag) -> Status {
    using S = typename decltype(tag)::type;
    constexpr int V = 16 / sizeof(S);
    if (contiguous && total % V == 0 && aligned16(g.y)) {
      activationVecKernel<S, V>
          <<<blocksFor(total / V), kThreads, 0, st>>>(static_cast<S*>(g.y), total / V, g.act);
      return launched("activation");
    }
    activationKernel<S><<<blocksFor(total), kThreads, 0, st>>>(static_cast<S*>(g.y), g.m, g.n,
                                                               g.ldy, g.batch, g.y_stride, g.act);
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
using GemmAcc =
    std::conditional_t<std::is_same_v<typename DNum<S>::C, double>, double,
                       std::conditional_t<std::is_floating_point_v<typename DNum<S>::C>, float,
                                          std::conditional_t<std::is_signed_v<typename DNum<S>::C>,
                                                             int64_t, uint64_t>>>;

// Y is S, or float for FP16/BF16 inputs (GemmArgs::y_dtype).
template <typename S, typename Y = S>
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
  Y* Yp = static_cast<Y*>(g.y);
  const S* bias = static_cast<const S*>(g.bias);
  for (int64_t job = blockIdx.x; job < tiles * g.batch; job += gridDim.x) {
    const int64_t bi = job / tiles, t = job - bi * tiles;
    const int64_t m0 = (t / tiles_n) * kTm, n0 = (t % tiles_n) * kTn;
    const S* a = A + bi * g.a_stride;
    const S* b = B + bi * g.b_stride;
    Y* y = Yp + bi * g.y_stride;
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
        if (gm < g.m && gk < g.k)
          v = static_cast<Acc>(DNum<S>::load(g.ta ? a[gk * g.lda + gm] : a[gm * g.lda + gk]));
        sa[ki][mi] = v;
      }
      for (int e = threadIdx.x; e < kTk * kTn; e += 256) {
        const int ki = e / kTn, ni = e % kTn;
        const int64_t gk = k0 + ki, gn = n0 + ni;
        Acc v = Acc(0);
        if (gn < g.n && gk < g.k)
          v = static_cast<Acc>(DNum<S>::load(g.tb ? b[gn * g.ldb + gk] : b[gk * g.ldb + gn]));
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
        Y* p = y + gm * g.ldy + gn;
        if constexpr (std::is_floating_point_v<C>) {
          using T = std::conditional_t<std::is_same_v<C, double>, double, float>;
          T v = static_cast<T>(acc[i][j]) * static_cast<T>(g.alpha);
          if (g.beta != 0) v += static_cast<T>(g.beta) * static_cast<T>(DNum<Y>::load(*p));
          if (bias) v += static_cast<T>(DNum<S>::load(bias[gn]));
          *p = DNum<Y>::store(static_cast<typename DNum<Y>::C>(applyAct(v, g.act)));
        } else {
          // Integers: exact when alpha == 1 and beta == 0 (the reference's rule), else via double.
          if (g.alpha == 1 && g.beta == 0 && !bias) {
            *p = static_cast<Y>(acc[i][j]);
          } else {
            double v = static_cast<double>(acc[i][j]) * g.alpha;
            if (g.beta != 0) v += g.beta * static_cast<double>(*p);
            if (bias) v += static_cast<double>(bias[gn]);
            *p = static_cast<Y>(v);
          }
        }
      }
  }
}
}  // namespace

bool gemmTiledApplies(const GemmArgs& g) {
  return g.c == nullptr && g.dtype != DataType::kBool && g.dtype != DataType::kUndefined &&
         dtypeSize(g.dtype) != 0 && gemmMixedOk(g);
}

Status gemmTiled(const GemmArgs& g, void* stream) {
  if (g.m == 0 || g.n == 0 || g.batch == 0) return Status::ok();
  if (g.c != nullptr) return Status::unsupported("the tiled GEMM reads C from Y only");
  auto st = static_cast<cudaStream_t>(stream);
  const int64_t jobs = ((g.m + kTm - 1) / kTm) * ((g.n + kTn - 1) / kTn) * g.batch;
  const unsigned grid = static_cast<unsigned>(std::min<int64_t>(jobs, 132 * 16));
  if (!gemmMixedOk(g)) return Status::unsupported("GEMM (tiled): unsupported output type");
  const bool to_float = gemmOutType(g) != g.dtype;
  return visitDevice<kFloats | kSigned | kUnsigned>(g.dtype, "GEMM", [&](auto tag) -> Status {
    using S = typename decltype(tag)::type;
    if constexpr (std::is_same_v<typename DNum<S>::C, float> && !std::is_same_v<S, float>) {
      if (to_float) {
        tiledGemmKernel<S, float><<<grid, 256, 0, st>>>(g);
        return launched("GEMM (tiled)");
      }
    }
    tiledGemmKernel<S><<<grid, 256, 0, st>>>(g);
    return launched("GEMM (tiled)");
  });
}

}  // namespace opforge::ops
