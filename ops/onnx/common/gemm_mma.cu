// gemm_mma.cu — opforge's tensor-core GEMM for FP16/BF16 (tactics cuda.mma128 / cuda.mma64 of
// MatMul, Gemm and FusedMatMul, cuda.mma1x1_* of Conv and FusedConv): mma.sync m16n8k16 with FP32
// accumulators, a 3-stage cp.async pipeline, and the whole epilogue — alpha, beta * C, the bias
// and any activation, the erf GELU and SiLU included — applied to the accumulators before the one
// store. cuBLASLt's epilogues stop at ReLU and the tanh GELU, so the MLPs of ConvNeXt and ViT
// (erf GELU) and EfficientNet's 1x1 convolutions (SiLU) pay a second pass over their largest
// tensors there; here they do not. Measured on an H100 (bench/results/public_models_h200.md) this
// kernel is still 1.5-6x slower than cuBLASLt plus that pass on those models' large GEMMs (a lane's
// 4-byte stores, K < 32 slices half empty, 2 blocks an SM); the builder times both and takes it
// for small products only.
//
// Block tile 128 x BN (BN = 128 or 64), K in slices of 32; 8 warps as 2 x 4, each 64 x BN/4.
// Shared rows are padded by 8 halves so the 8 row addresses of an ldmatrix fall in 8 different
// 16-byte bank groups. B is [K, N] (N contiguous, read by the transposing ldmatrix) or, with
// transB, [N, K].
#include "../../common/mma_sync.cuh"
#include "cuda_common.cuh"
#include "gemm_act.cuh"
#include "gemm_cuda.h"
#include "gemm_tc.h"

namespace opforge::ops {
namespace {

constexpr int kBm = 128, kBk = 32, kStages = 3, kMmaThreads = 256;

template <int BN, bool TB>
struct MmaTile {
  static constexpr int kWn = BN / 4;                 // columns per warp
  static constexpr int kMi = 4, kNi = kWn / 8;       // m16 and n8 fragments per warp
  static constexpr int kSa = kBk + 8;                // A tile [128][32] row stride, halves
  static constexpr int kSb = TB ? kBk + 8 : BN + 8;  // B tile [BN][32] or [32][BN]
  static constexpr int kAElems = kBm * kSa;
  static constexpr int kBElems = TB ? BN * kSb : kBk * kSb;
  static constexpr size_t kSmem = size_t{kStages} * (kAElems + kBElems) * 2;
};

// 8 elements (16 bytes) from global src to shared dst: by cp.async when vec (zero-filled, nothing
// read, when !valid), else element by element, zeros past the first n (the end of a row).
template <typename T>
__device__ __forceinline__ void copy8(T* dst, const T* src, const T* base, bool valid, int64_t n,
                                      bool vec) {
  if (vec) {
    tc::cpAsync16(tc::smemAddr(dst), valid ? src : base, valid);
    return;
  }
  for (int e = 0; e < 8; ++e) dst[e] = valid && e < n ? src[e] : T(0.f);
}

// One K slice (k0) of A and B into stage buffers. vec: 16-byte copies by cp.async (K and N are
// multiples of 8, so a 16-byte chunk is wholly in or out), else element by element (pointers that
// are not 16-byte aligned).
template <typename T, int BN, bool TB>
__device__ __forceinline__ void loadSlice(T* as, T* bs, const T* a, const T* b, const GemmArgs& g,
                                          int64_t m0, int64_t n0, int64_t k0, bool vec) {
  using L = MmaTile<BN, TB>;
  constexpr int kChunksK = kBk / 8;
  for (int c = threadIdx.x; c < kBm * kChunksK; c += kMmaThreads) {
    const int r = c / kChunksK, kc = (c % kChunksK) * 8;
    const int64_t gm = m0 + r, gk = k0 + kc;
    copy8(as + r * L::kSa + kc, a + gm * g.lda + gk, a, gm < g.m && gk < g.k, g.k - gk, vec);
  }
  if constexpr (TB) {  // B^T stored [N][K]
    for (int c = threadIdx.x; c < BN * kChunksK; c += kMmaThreads) {
      const int r = c / kChunksK, kc = (c % kChunksK) * 8;
      const int64_t gn = n0 + r, gk = k0 + kc;
      copy8(bs + r * L::kSb + kc, b + gn * g.ldb + gk, b, gn < g.n && gk < g.k, g.k - gk, vec);
    }
  } else {  // B stored [K][N]
    constexpr int kChunksN = BN / 8;
    for (int c = threadIdx.x; c < kBk * kChunksN; c += kMmaThreads) {
      const int r = c / kChunksN, nc = (c % kChunksN) * 8;
      const int64_t gk = k0 + r, gn = n0 + nc;
      copy8(bs + r * L::kSb + nc, b + gk * g.ldb + gn, b, gk < g.k && gn < g.n, g.n - gn, vec);
    }
  }
}

template <typename T, int BN, bool TB>
__global__ void __launch_bounds__(kMmaThreads, 2) mmaGemmKernel(GemmArgs g, bool vec) {
  using L = MmaTile<BN, TB>;
  extern __shared__ __align__(16) unsigned char smem_raw[];
  T* sa = reinterpret_cast<T*>(smem_raw);
  T* sb = sa + kStages * L::kAElems;
  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
  const int wm = warp >> 2, wn = warp & 3;
  const int64_t tiles_n = (g.n + BN - 1) / BN, tiles_m = (g.m + kBm - 1) / kBm;
  const int64_t job = blockIdx.x, tn = job % tiles_n, rest = job / tiles_n;
  const int64_t tm = rest % tiles_m, bi = rest / tiles_m;
  const int64_t m0 = tm * kBm, n0 = tn * BN;
  const T* a = static_cast<const T*>(g.a) + bi * g.a_stride;
  const T* b = static_cast<const T*>(g.b) + bi * g.b_stride;

  float acc[L::kMi][L::kNi][4];
#pragma unroll
  for (int i = 0; i < L::kMi; ++i)
#pragma unroll
    for (int j = 0; j < L::kNi; ++j)
      acc[i][j][0] = acc[i][j][1] = acc[i][j][2] = acc[i][j][3] = 0.f;

  const int slices = static_cast<int>((g.k + kBk - 1) / kBk);
#pragma unroll
  for (int s = 0; s < kStages - 1; ++s) {
    if (s < slices)
      loadSlice<T, BN, TB>(sa + s * L::kAElems, sb + s * L::kBElems, a, b, g, m0, n0,
                           int64_t{s} * kBk, vec);
    tc::cpCommit();
  }
  for (int kt = 0; kt < slices; ++kt) {
    tc::cpWait<kStages - 2>();  // slice kt has landed
    __syncthreads();            // and every warp is done with the stage about to be refilled
    const int next = kt + kStages - 1;
    if (next < slices)
      loadSlice<T, BN, TB>(sa + (next % kStages) * L::kAElems, sb + (next % kStages) * L::kBElems,
                           a, b, g, m0, n0, int64_t{next} * kBk, vec);
    tc::cpCommit();
    const T* as = sa + (kt % kStages) * L::kAElems;
    const T* bs = sb + (kt % kStages) * L::kBElems;
    uint32_t bt[L::kNi][4];  // TB: one ldmatrix per n8 fragment covers the slice's 32 k
    if constexpr (TB) {
#pragma unroll
      for (int j = 0; j < L::kNi; ++j)
        tc::ldsm4(bt[j],
                  tc::smemAddr(bs + (wn * L::kWn + j * 8 + (lane & 7)) * L::kSb + (lane >> 3) * 8));
    }
#pragma unroll
    for (int kk = 0; kk < kBk / 16; ++kk) {
      uint32_t af[L::kMi][4];
#pragma unroll
      for (int i = 0; i < L::kMi; ++i)
        tc::ldsm4(af[i], tc::smemAddr(as + (wm * 64 + i * 16 + (lane & 15)) * L::kSa + kk * 16 +
                                      (lane >> 4) * 8));
      uint32_t bf[L::kNi][2];
      if constexpr (TB) {
#pragma unroll
        for (int j = 0; j < L::kNi; ++j) bf[j][0] = bt[j][2 * kk], bf[j][1] = bt[j][2 * kk + 1];
      } else {
#pragma unroll
        for (int j = 0; j < L::kNi; j += 2) {
          uint32_t v[4];
          tc::ldsm4t(v, tc::smemAddr(bs + (kk * 16 + ((lane >> 3) & 1) * 8 + (lane & 7)) * L::kSb +
                                     wn * L::kWn + j * 8 + (lane >> 4) * 8));
          bf[j][0] = v[0], bf[j][1] = v[1], bf[j + 1][0] = v[2], bf[j + 1][1] = v[3];
        }
      }
#pragma unroll
      for (int i = 0; i < L::kMi; ++i)
#pragma unroll
        for (int j = 0; j < L::kNi; ++j) tc::mma<T>(acc[i][j], af[i], bf[j][0], bf[j][1]);
    }
  }

  // Epilogue: Y = act(alpha * acc + beta * C + bias), C = g.c or Y's contents; a lane's pair of
  // adjacent columns is one 4-byte store (N is even, columns start even).
  T* y = static_cast<T*>(g.y) + bi * g.y_stride;
  const T* cp = g.c ? static_cast<const T*>(g.c) + bi * g.y_stride : (g.beta != 0 ? y : nullptr);
  const T* bias = static_cast<const T*>(g.bias);
  const float alpha = static_cast<float>(g.alpha), beta = static_cast<float>(g.beta);
#pragma unroll
  for (int j = 0; j < L::kNi; ++j) {
    const int64_t col = n0 + wn * L::kWn + j * 8 + (lane & 3) * 2;
    if (col >= g.n) continue;
    float b0 = 0.f, b1 = 0.f;
    if (bias) b0 = static_cast<float>(bias[col]), b1 = static_cast<float>(bias[col + 1]);
#pragma unroll
    for (int i = 0; i < L::kMi; ++i)
#pragma unroll
      for (int r = 0; r < 2; ++r) {
        const int64_t row = m0 + wm * 64 + i * 16 + (lane >> 2) + r * 8;
        if (row >= g.m) continue;
        float v0 = acc[i][j][2 * r] * alpha, v1 = acc[i][j][2 * r + 1] * alpha;
        const int64_t at = row * g.ldy + col;
        if (cp) {
          v0 += beta * static_cast<float>(cp[at]);
          v1 += beta * static_cast<float>(cp[at + 1]);
        }
        v0 = gemmAct<T>(v0 + b0, g.act);
        v1 = gemmAct<T>(v1 + b1, g.act);
        if (vec) {
          *reinterpret_cast<uint32_t*>(y + at) = tc::pack<T>(v0, v1);
        } else {
          y[at] = T(v0);
          y[at + 1] = T(v1);
        }
      }
  }
}

template <typename T, int BN, bool TB>
Status launchMma(const GemmArgs& g, bool vec, cudaStream_t st) {
  using L = MmaTile<BN, TB>;
  auto* kernel = mmaGemmKernel<T, BN, TB>;
  // Per launch, as the flash kernel does: the attribute is per device, and the call is host-only.
  const cudaError_t attr = cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                                static_cast<int>(L::kSmem));
  if (attr != cudaSuccess) return cudaStatus(attr, "GEMM (cuda.mma): shared memory size");
  const int64_t jobs = ((g.m + kBm - 1) / kBm) * ((g.n + BN - 1) / BN) * g.batch;
  kernel<<<static_cast<unsigned>(jobs), kMmaThreads, L::kSmem, st>>>(g, vec);
  return launched("GEMM (cuda.mma)");
}

}  // namespace

bool gemmMmaApplies(const GemmArgs& g, int bn) {
  if ((bn != 64 && bn != 128) || !tensorCoreOperandsOk(g)) return false;
  const int64_t jobs = ((g.m + kBm - 1) / kBm) * ((g.n + bn - 1) / bn) * g.batch;
  return jobs <= int64_t{0x7fffffff};
}

Status gemmMma(const GemmArgs& g, int bn, void* stream) {
  if (!gemmMmaApplies(g, bn)) return Status::unsupported("GEMM (cuda.mma): unsupported problem");
  auto st = static_cast<cudaStream_t>(stream);
  const bool vec = aligned16(g.a) && aligned16(g.b) && aligned16(g.y) && (!g.c || aligned16(g.c));
  const bool half = g.dtype == DataType::kFloat16;
  if (bn == 128) {
    if (half)
      return g.tb ? launchMma<__half, 128, true>(g, vec, st)
                  : launchMma<__half, 128, false>(g, vec, st);
    return g.tb ? launchMma<__nv_bfloat16, 128, true>(g, vec, st)
                : launchMma<__nv_bfloat16, 128, false>(g, vec, st);
  }
  if (half)
    return g.tb ? launchMma<__half, 64, true>(g, vec, st)
                : launchMma<__half, 64, false>(g, vec, st);
  return g.tb ? launchMma<__nv_bfloat16, 64, true>(g, vec, st)
              : launchMma<__nv_bfloat16, 64, false>(g, vec, st);
}

}  // namespace opforge::ops
