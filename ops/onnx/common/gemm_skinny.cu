// gemm_skinny.cu — opforge's tensor-core GEMM for products with a short K (at most 64): the 1x1
// convolutions that expand or project few channels (EfficientNet's 16 -> 96 at 112 x 112, a
// ResNet bottleneck's 64 -> 64), tactics cuda.mma_skinny of MatMul / Gemm / FusedMatMul and
// cuda.mma1x1_skinny of Conv / FusedConv. With K this short a product is a stream: each row of A
// is read once, each row of Y written once, and B fits in a warp's registers. cuBLASLt's tiles
// (K slices of 32-64) run such problems at 3-5x their memory floor, and its epilogue lacks SiLU.
//
// A warp holds B's fragments for its chunk of NW = 8 NT columns in registers (KT k16 steps), then
// walks m16 row tiles: A's fragments straight from global memory (4-byte loads, the next tile's
// issued before the current tile's epilogue), KT x NT
// mma.sync m16n8k16 with FP32 accumulators, alpha * acc staged in shared memory as float, and the
// epilogue — bias, beta * C, any activation — per 16-byte vector of a row, so every global store
// (and the residual's load) is 16 bytes wide and coalesced along the row.
#include <algorithm>

#include "../../common/mma_sync.cuh"
#include "../../common/vec.cuh"
#include "cuda_common.cuh"
#include "gemm_act.cuh"
#include "gemm_skinny.h"
#include "gemm_tc.h"

namespace opforge::ops {
namespace {

constexpr int kSkWarps = 4, kSkThreads = kSkWarps * 32;

// The staging row stride in floats: NW + 8 puts a half-warp's 8-byte stores (4 rows x 4 lanes)
// in 16 distinct bank pairs.
template <int NT>
constexpr int skStride() {
  return NT * 8 + 8;
}

template <typename T>
__device__ __forceinline__ uint32_t bitsOf(T v) {
  return static_cast<uint32_t>(*reinterpret_cast<const uint16_t*>(&v));
}

// Two consecutive elements (the lower in the low half) as one fragment register; zero when !ok.
// `vec`: p is 4-byte aligned (one load).
template <typename T>
__device__ __forceinline__ uint32_t pairAt(const T* p, bool ok, bool vec) {
  if (!ok) return 0u;
  if (vec) return *reinterpret_cast<const uint32_t*>(p);
  return bitsOf(p[0]) | (bitsOf(p[1]) << 16);
}

template <typename T, int KT, int NT>
__global__ void __launch_bounds__(kSkThreads, 4) skinnyKernel(GemmArgs g, bool vec) {
  constexpr int NW = NT * 8, S = skStride<NT>();
  extern __shared__ __align__(16) float sk_stage[];
  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31, gq = lane >> 2, tq = lane & 3;
  const int64_t n0 = int64_t(blockIdx.y) * NW, bi = blockIdx.z;
  const T* a = static_cast<const T*>(g.a) + bi * g.a_stride;
  const T* b = static_cast<const T*>(g.b) + bi * g.b_stride;
  T* y = static_cast<T*>(g.y) + bi * g.y_stride;
  const T* cp = g.c ? static_cast<const T*>(g.c) + bi * g.y_stride : (g.beta != 0 ? y : nullptr);
  const T* bias = static_cast<const T*>(g.bias);
  const float alpha = static_cast<float>(g.alpha), beta = static_cast<float>(g.beta);

  // B's fragments: register j of step kt holds (k = 16 kt + 2 tq (+ 8), n = n0 + 8 j + gq).
  uint32_t bf[KT][NT][2];
#pragma unroll
  for (int kt = 0; kt < KT; ++kt)
#pragma unroll
    for (int j = 0; j < NT; ++j)
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        const int64_t k = kt * 16 + 2 * tq + 8 * h, n = n0 + j * 8 + gq;
        const bool ok = k < g.k && n < g.n;  // K is even: k < K means k + 1 < K
        if (g.tb) {
          bf[kt][j][h] = pairAt(b + n * g.ldb + k, ok, vec);
        } else {
          bf[kt][j][h] =
              ok ? bitsOf(b[k * g.ldb + n]) | (bitsOf(b[(k + 1) * g.ldb + n]) << 16) : 0u;
        }
      }

  float* st = sk_stage + warp * 16 * S;
  const int64_t tiles = (g.m + 15) / 16, step = int64_t(gridDim.x) * kSkWarps;
  // A's fragments of row tile `t`; the next tile's are loaded before this tile's epilogue, so
  // their latency hides behind it.
  uint32_t af[KT][4];
  const auto loadA = [&](int64_t t) {
    const int64_t r0 = t * 16 + gq, r1 = r0 + 8;
#pragma unroll
    for (int kt = 0; kt < KT; ++kt) {
      const int64_t k = kt * 16 + 2 * tq;
      af[kt][0] = pairAt(a + r0 * g.lda + k, r0 < g.m && k < g.k, vec);
      af[kt][1] = pairAt(a + r1 * g.lda + k, r1 < g.m && k < g.k, vec);
      af[kt][2] = pairAt(a + r0 * g.lda + k + 8, r0 < g.m && k + 8 < g.k, vec);
      af[kt][3] = pairAt(a + r1 * g.lda + k + 8, r1 < g.m && k + 8 < g.k, vec);
    }
  };
  int64_t tile = int64_t(blockIdx.x) * kSkWarps + warp;
  if (tile < tiles) loadA(tile);
  for (; tile < tiles; tile += step) {
    const int64_t m0 = tile * 16;
    float acc[NT][4];
#pragma unroll
    for (int j = 0; j < NT; ++j) acc[j][0] = acc[j][1] = acc[j][2] = acc[j][3] = 0.f;
#pragma unroll
    for (int kt = 0; kt < KT; ++kt)
#pragma unroll
      for (int j = 0; j < NT; ++j) tc::mma<T>(acc[j], af[kt], bf[kt][j][0], bf[kt][j][1]);
    if (tile + step < tiles) loadA(tile + step);
#pragma unroll
    for (int j = 0; j < NT; ++j) {
      const int col = j * 8 + 2 * tq;
      *reinterpret_cast<float2*>(st + gq * S + col) =
          make_float2(acc[j][0] * alpha, acc[j][1] * alpha);
      *reinterpret_cast<float2*>(st + (gq + 8) * S + col) =
          make_float2(acc[j][2] * alpha, acc[j][3] * alpha);
    }
    __syncwarp();
    // Epilogue: a lane takes 8 consecutive columns of a row (16 bytes of Y).
    for (int c = lane; c < 16 * NT; c += 32) {
      const int r = c / NT, ch = c - r * NT;
      const int64_t row = m0 + r, col = n0 + ch * 8;
      if (row >= g.m || col >= g.n) continue;
      float v[8];
      const float4 lo = *reinterpret_cast<const float4*>(st + r * S + ch * 8);
      const float4 hi = *reinterpret_cast<const float4*>(st + r * S + ch * 8 + 4);
      v[0] = lo.x, v[1] = lo.y, v[2] = lo.z, v[3] = lo.w, v[4] = hi.x, v[5] = hi.y, v[6] = hi.z,
      v[7] = hi.w;
      const int64_t at = row * g.ldy + col;
      if (vec) {
        if (cp) {
          const uint4 cv = *reinterpret_cast<const uint4*>(cp + at);
          const T* ce = reinterpret_cast<const T*>(&cv);
#pragma unroll
          for (int e = 0; e < 8; ++e) v[e] += beta * static_cast<float>(ce[e]);
        }
        if (bias) {
          const uint4 bv = *reinterpret_cast<const uint4*>(bias + col);
          const T* be = reinterpret_cast<const T*>(&bv);
#pragma unroll
          for (int e = 0; e < 8; ++e) v[e] += static_cast<float>(be[e]);
        }
        uint4 out;
        uint32_t* ow = reinterpret_cast<uint32_t*>(&out);
#pragma unroll
        for (int e = 0; e < 4; ++e)
          ow[e] = tc::pack<T>(gemmAct<T>(v[2 * e], g.act), gemmAct<T>(v[2 * e + 1], g.act));
        *reinterpret_cast<uint4*>(y + at) = out;
      } else {
#pragma unroll
        for (int e = 0; e < 8; ++e) {
          float x = v[e];
          if (cp) x += beta * static_cast<float>(cp[at + e]);
          if (bias) x += static_cast<float>(bias[col + e]);
          y[at + e] = T(gemmAct<T>(x, g.act));
        }
      }
    }
    __syncwarp();  // the stage is rewritten by the next tile
  }
}

// The widest column chunk (in n8 tiles) a warp holds for KT k16 steps: B's fragments take
// 2 KT NT registers, at most 32.
constexpr int maxNt(int kt) {
  return kt == 1 ? 16 : kt == 2 ? 8 : 4;
}

// NT for this product: the fewest n8 tiles that cover N from the kernel's set, else the widest.
int chooseNt(int kt, int64_t n) {
  const int tiles = static_cast<int>((n + 7) / 8);
  if (kt == 1) {
    for (int nt : {4, 8, 12, 16})
      if (tiles <= nt) return nt;
    return 16;
  }
  if (kt == 2) return tiles <= 4 ? 4 : 8;
  return maxNt(kt);
}

template <typename T, int KT, int NT>
Status launchSkinny(const GemmArgs& g, bool vec, cudaStream_t st) {
  auto* kernel = skinnyKernel<T, KT, NT>;
  const size_t smem = size_t{kSkWarps} * 16 * skStride<NT>() * sizeof(float);
  const int64_t tiles = (g.m + 15) / 16;
  const int per_sm = cuvec::blocksPerSm(kernel, kSkThreads, smem);
  // Two waves at most: a warp walks several row tiles, each one's A loaded during the previous
  // one's epilogue.
  const int64_t most = int64_t(cuvec::smCount()) * std::max(per_sm, 1) * 2;
  const int64_t blocks = std::clamp<int64_t>((tiles + kSkWarps - 1) / kSkWarps, 1, most);
  const dim3 grid(static_cast<unsigned>(blocks),
                  static_cast<unsigned>((g.n + NT * 8 - 1) / (NT * 8)),
                  static_cast<unsigned>(g.batch));
  kernel<<<grid, kSkThreads, smem, st>>>(g, vec);
  return launched("GEMM (cuda.mma_skinny)");
}

template <typename T, int KT>
Status launchKt(const GemmArgs& g, bool vec, cudaStream_t st) {
  switch (chooseNt(KT, g.n)) {
    case 4:
      return launchSkinny<T, KT, 4>(g, vec, st);
    case 8:
      if constexpr (maxNt(KT) >= 8) return launchSkinny<T, KT, 8>(g, vec, st);
      break;
    case 12:
      if constexpr (maxNt(KT) >= 12) return launchSkinny<T, KT, 12>(g, vec, st);
      break;
    case 16:
      if constexpr (maxNt(KT) >= 16) return launchSkinny<T, KT, 16>(g, vec, st);
      break;
    default:
      break;
  }
  return Status::internal("GEMM (cuda.mma_skinny): no kernel for this column chunk");
}

template <typename T>
Status launchType(const GemmArgs& g, bool vec, cudaStream_t st) {
  switch ((g.k + 15) / 16) {
    case 1:
      return launchKt<T, 1>(g, vec, st);
    case 2:
      return launchKt<T, 2>(g, vec, st);
    case 3:
      return launchKt<T, 3>(g, vec, st);
    default:
      return launchKt<T, 4>(g, vec, st);
  }
}

}  // namespace

bool gemmSkinnyApplies(const GemmArgs& g) {
  if (!tensorCoreOperandsOk(g) || g.k > kSkinnyMaxK || g.batch > 65535) return false;
  const int64_t chunk = int64_t{8} * chooseNt(static_cast<int>((g.k + 15) / 16), g.n);
  return (g.n + chunk - 1) / chunk <= 65535;
}

Status gemmSkinny(const GemmArgs& g, void* stream) {
  if (!gemmSkinnyApplies(g))
    return Status::unsupported("GEMM (cuda.mma_skinny): not a product with K <= 64 it takes");
  auto st = static_cast<cudaStream_t>(stream);
  // 16-byte vectors where every pointer allows (the plan's buffers do); element by element else.
  const bool vec = aligned16(g.a) && aligned16(g.b) && aligned16(g.y) && (!g.c || aligned16(g.c)) &&
                   (!g.bias || aligned16(g.bias));
  if (g.dtype == DataType::kFloat16) return launchType<__half>(g, vec, st);
  return launchType<__nv_bfloat16>(g, vec, st);
}

}  // namespace opforge::ops
