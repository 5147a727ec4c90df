// flash_attention.cuh — FusedAttention's tensor-core tactic for FP16 and BF16 (cuda.flash): one
// pass over K and V per block of 64 query rows with an online softmax, so the Sq x Sk scores never
// leave the registers (the FlashAttention-2 schedule). Each of the 4 warps owns 16 query rows; a
// step takes 64 keys: S = Q K^T by mma.sync m16n8k16 (FP32 accumulators), the running row maximum
// and sum rescale the output accumulators, and the probabilities, rounded to the input type, feed
// O += P V straight from the S accumulators (the m16n8k16 C fragment of two adjacent 8-key tiles is
// the A fragment of one 16-key step). K and V tiles arrive by cp.async: V_j loads while S_j is
// computed, K_{j+1} while P_j V_j is. The head size is padded to D (32, 64 or 128) with zeros.
// An optional bias (attention_views.h) is added to each score before the softmax.
// K may come transposed (K^T [d, Sk], what the TorchScript exports of BERT and GPT-2 give): its
// tile is then [D][64 keys] and the S = Q K^T fragments come from the transposing ldmatrix. Tiles
// load by cp.async and outputs store in pairs when bases, offsets and row strides are 16-byte
// multiples and the head sizes (K^T: Sk too) multiples of 8 (`vec`; the engine's buffers are
// 256-byte aligned), else element by element.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>

#include "../../common/int_fit.h"
#include "../../common/mma_sync.cuh"
#include "attention_views.h"

namespace opforge::ops::flash {

constexpr int kRows = 64;  // query rows per block (16 per warp)
constexpr int kKeys = 64;  // keys per step
constexpr int kThreads = 128;

template <int D>
constexpr int kStride = D + 8;  // halves per shared-memory row: ldmatrix's 8 rows hit 8 bank groups

constexpr int kStrideT = kKeys + 8;  // K^T tiles: [D][64 keys] rows, same padding

template <int D>
constexpr int kTileK = kKeys* kStride<D> > D* kStrideT ? kKeys* kStride<D> : D* kStrideT;

template <int D>
constexpr size_t smemBytes() {
  return static_cast<size_t>(kRows * kStride<D> + kTileK<D> + kKeys * kStride<D>) * 2;
}

using tc::cpAsync16;
using tc::cpCommit;
using tc::cpWait;
using tc::ldsm4;
using tc::ldsm4t;
using tc::mma;
using tc::pack;
using tc::smemAddr;

// rows [r0, r0 + n) of view w at (b, h), `cols` columns (a multiple of 8), into a [n][D] tile,
// zeros elsewhere: by cp.async when the base is 16-byte aligned (vec), else element by element.
template <typename T, int D, int N>
__device__ __forceinline__ void loadTile(T* tile, const T* base, const AttnView& w, int64_t b,
                                         int64_t h, int64_t r0, int64_t rows, int64_t cols,
                                         bool vec) {
  constexpr int kChunks = D / 8;
  const T* p = base + w.off + b * w.sb + h * w.sh;
  if (!vec) {
    for (int i = threadIdx.x; i < N * D; i += kThreads) {
      const int r = i / D, c = i - r * D;
      tile[r * kStride<D> + c] = r0 + r < rows && c < cols ? p[(r0 + r) * w.ss + c] : T(0.f);
    }
    return;
  }
  for (int i = threadIdx.x; i < N * kChunks; i += kThreads) {
    const int r = i / kChunks, c = (i - r * kChunks) * 8;
    const bool valid = r0 + r < rows && c < cols;
    cpAsync16(smemAddr(tile + r * kStride<D> + c), valid ? p + (r0 + r) * w.ss + c : base, valid);
  }
}

// K given transposed (K^T [d, Sk], keys contiguous): keys [n0, n0 + 64) of each of the d rows of
// view w into a [D][64] tile, zeros elsewhere (vec: Sk and the strides are multiples of 8).
template <typename T, int D>
__device__ __forceinline__ void loadTileT(T* tile, const T* base, const AttnView& w, int64_t b,
                                          int64_t h, int64_t n0, int64_t keys, int64_t dims,
                                          bool vec) {
  const T* p = base + w.off + b * w.sb + h * w.sh;  // element (key s, dim t) at s * ss + t * st
  if (!vec) {
    for (int i = threadIdx.x; i < D * kKeys; i += kThreads) {
      const int r = i / kKeys, c = i - r * kKeys;
      tile[r * kStrideT + c] = r < dims && n0 + c < keys ? p[r * w.st + n0 + c] : T(0.f);
    }
    return;
  }
  for (int i = threadIdx.x; i < D * (kKeys / 8); i += kThreads) {
    const int r = i / (kKeys / 8), c = (i - r * (kKeys / 8)) * 8;
    const bool valid = r < dims && n0 + c < keys;
    cpAsync16(smemAddr(tile + r * kStrideT + c), valid ? p + r * w.st + n0 + c : base, valid);
  }
}

template <typename T, int D, bool KT>
__global__ void __launch_bounds__(kThreads)
    flashKernel(const T* __restrict__ q, const T* __restrict__ k, const T* __restrict__ v,
                const T* __restrict__ bias, T* __restrict__ y, AttnGeom g, bool vec) {
  extern __shared__ __align__(16) unsigned char smem_raw[];
  T* Qs = reinterpret_cast<T*>(smem_raw);
  T* Ks = Qs + kRows * kStride<D>;  // [64 keys][D], or K^T [D][64 keys] (KT)
  T* Vs = Ks + kTileK<D>;
  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
  const int64_t mblocks = (g.sq + kRows - 1) / kRows;
  const int64_t bh = blockIdx.x / mblocks, m0 = (blockIdx.x - bh * mblocks) * kRows;
  const int64_t b = bh / g.H, h = bh - b * g.H;
  const int nsteps = static_cast<int>((g.sk + kKeys - 1) / kKeys);
  constexpr float kLog2e = 1.4426950408889634f;  // exp(x) = exp2(x log2 e)
  const float sl2 = static_cast<float>(g.scale) * kLog2e;
  const T* brow = bias ? bias + attnBiasRow(g.bias, bh) : nullptr;  // bh = b * H + h

  loadTile<T, D, kRows>(Qs, q, g.q, b, h, m0, g.sq, g.d, vec);
  cpCommit();
  if constexpr (KT)
    loadTileT<T, D>(Ks, k, g.k, b, h, 0, g.sk, g.d, vec);
  else
    loadTile<T, D, kKeys>(Ks, k, g.k, b, h, 0, g.sk, g.d, vec);
  cpCommit();

  uint32_t qf[D / 16][4];
  float o[D / 8][4];
#pragma unroll
  for (int t = 0; t < D / 8; ++t) o[t][0] = o[t][1] = o[t][2] = o[t][3] = 0.f;
  float mrow[2] = {-INFINITY, -INFINITY}, lrow[2] = {0.f, 0.f};  // rows lane/4 and lane/4 + 8

  for (int step = 0; step < nsteps; ++step) {
    const int64_t n0 = static_cast<int64_t>(step) * kKeys;
    loadTile<T, D, kKeys>(Vs, v, g.v, b, h, n0, g.sk, g.dv, vec);
    cpCommit();
    cpWait<1>();  // Q and K_step have landed
    __syncthreads();
    if (step == 0) {
#pragma unroll
      for (int kk = 0; kk < D / 16; ++kk)
        ldsm4(qf[kk],
              smemAddr(Qs + (warp * 16 + (lane & 15)) * kStride<D> + kk * 16 + (lane >> 4) * 8));
    }
    // S = Q K^T: 16 rows x 64 keys per warp, 8 tiles of 8 keys.
    float s[kKeys / 8][4];
#pragma unroll
    for (int j = 0; j < kKeys / 8; ++j) {
      s[j][0] = s[j][1] = s[j][2] = s[j][3] = 0.f;
#pragma unroll
      for (int kk = 0; kk < D / 16; kk += 2) {
        uint32_t kb[4];
        if constexpr (KT)  // B[dim][key] row-major: the transposing load, rows are dims
          ldsm4t(kb, smemAddr(Ks + (kk * 16 + (lane >> 3) * 8 + (lane & 7)) * kStrideT + j * 8));
        else
          ldsm4(kb, smemAddr(Ks + (j * 8 + (lane & 7)) * kStride<D> + kk * 16 + (lane >> 3) * 8));
        mma<T>(s[j], qf[kk], kb[0], kb[1]);
        mma<T>(s[j], qf[kk + 1], kb[2], kb[3]);
      }
    }
    // Online softmax in log2 units; keys past Sk count as -inf. While a row has seen only -inf
    // (a masked block) its maximum stays -inf and the exponents use 0, so nothing turns NaN; a
    // row that is -inf throughout ends with a sum of 0 and a NaN output, as the reference's.
    float mx[2] = {mrow[0], mrow[1]};
#pragma unroll
    for (int j = 0; j < kKeys / 8; ++j)
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        const int64_t key = n0 + j * 8 + (lane & 3) * 2 + (e & 1);
        const int64_t row = m0 + warp * 16 + (lane >> 2) + (e >> 1) * 8;
        float x = -INFINITY;
        if (key < g.sk) {
          x = s[j][e] * sl2;
          if (brow && row < g.sq)
            x += static_cast<float>(brow[row * g.bias.ss + key * g.bias.sk]) * kLog2e;
        }
        s[j][e] = x;
        mx[e >> 1] = fmaxf(mx[e >> 1], x);
      }
    float alpha[2], mu[2];
#pragma unroll
    for (int r = 0; r < 2; ++r) {
      mx[r] = fmaxf(mx[r], __shfl_xor_sync(0xffffffffu, mx[r], 1));
      mx[r] = fmaxf(mx[r], __shfl_xor_sync(0xffffffffu, mx[r], 2));
      mu[r] = mx[r] == -INFINITY ? 0.f : mx[r];
      alpha[r] = exp2f(mrow[r] - mu[r]);
      mrow[r] = mx[r];
      lrow[r] *= alpha[r];
    }
#pragma unroll
    for (int j = 0; j < kKeys / 8; ++j)
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        s[j][e] = exp2f(s[j][e] - mu[e >> 1]);
        lrow[e >> 1] += s[j][e];
      }
#pragma unroll
    for (int t = 0; t < D / 8; ++t) {
      o[t][0] *= alpha[0], o[t][1] *= alpha[0];
      o[t][2] *= alpha[1], o[t][3] *= alpha[1];
    }
    __syncthreads();  // every warp is done with K_step
    if (step + 1 < nsteps) {
      if constexpr (KT)
        loadTileT<T, D>(Ks, k, g.k, b, h, n0 + kKeys, g.sk, g.d, vec);
      else
        loadTile<T, D, kKeys>(Ks, k, g.k, b, h, n0 + kKeys, g.sk, g.d, vec);
      cpCommit();
      cpWait<1>();  // V_step has landed
    } else {
      cpWait<0>();
    }
    __syncthreads();
    // O += P V: 4 steps of 16 keys; the A fragment is two adjacent S tiles.
#pragma unroll
    for (int kk = 0; kk < kKeys / 16; ++kk) {
      const uint32_t a[4] = {
          pack<T>(s[2 * kk][0], s[2 * kk][1]), pack<T>(s[2 * kk][2], s[2 * kk][3]),
          pack<T>(s[2 * kk + 1][0], s[2 * kk + 1][1]), pack<T>(s[2 * kk + 1][2], s[2 * kk + 1][3])};
#pragma unroll
      for (int t = 0; t < D / 8; t += 2) {
        uint32_t vb[4];
        ldsm4t(vb, smemAddr(Vs + (kk * 16 + ((lane >> 3) & 1) * 8 + (lane & 7)) * kStride<D> +
                            t * 8 + (lane >> 4) * 8));
        mma<T>(o[t], a, vb[0], vb[1]);
        mma<T>(o[t + 1], a, vb[2], vb[3]);
      }
    }
    __syncthreads();  // every warp is done with V_step
  }

  float inv[2];
#pragma unroll
  for (int r = 0; r < 2; ++r) {
    lrow[r] += __shfl_xor_sync(0xffffffffu, lrow[r], 1);
    lrow[r] += __shfl_xor_sync(0xffffffffu, lrow[r], 2);
    inv[r] = 1.f / lrow[r];
    // nan_to_zero: a row whose sum is NaN (a NaN score) or 0 (no key seen) is zeros.
    if (g.nan_to_zero && !(lrow[r] > 0.f)) inv[r] = 0.f;
  }
  T* yp = y + g.y.off + b * g.y.sb + h * g.y.sh;
#pragma unroll
  for (int r = 0; r < 2; ++r) {
    const int64_t row = m0 + warp * 16 + (lane >> 2) + r * 8;
    if (row >= g.sq) continue;
#pragma unroll
    for (int t = 0; t < D / 8; ++t) {
      const int c = t * 8 + (lane & 3) * 2;
      if (c >= g.dv) continue;
      const bool zero = inv[r] == 0.f;  // nan_to_zero's empty row (o may hold NaN)
      const uint32_t pr =
          pack<T>(zero ? 0.f : o[t][2 * r] * inv[r], zero ? 0.f : o[t][2 * r + 1] * inv[r]);
      if (vec) {
        *reinterpret_cast<uint32_t*>(yp + row * g.y.ss + c) = pr;
      } else {
        const uint16_t lo = static_cast<uint16_t>(pr), hi = static_cast<uint16_t>(pr >> 16);
        yp[row * g.y.ss + c] = *reinterpret_cast<const T*>(&lo);
        yp[row * g.y.ss + c + 1] = *reinterpret_cast<const T*>(&hi);
      }
    }
  }
}

// The padded head size for d and dv: 32, 64 or 128; 0 when over 128.
inline int paddedHead(const AttnGeom& g) {
  const int64_t d = g.d > g.dv ? g.d : g.dv;
  return d <= 32 ? 32 : d <= 64 ? 64 : d <= 128 ? 128 : 0;
}

// Whether the geometry suits the kernel: head sizes up to 128, the last axis of Q, V and Y
// contiguous, K's head axis (K) or key axis (K given transposed) contiguous.
inline bool applies(const AttnGeom& g) {
  if (!ops::productBelow({g.B, g.H, (g.sq + kRows - 1) / kRows}, ops::kI32Limit) ||
      g.sk >= ops::kI32Limit)
    return false;
  return g.sk >= 1 && g.d >= 1 && g.dv >= 1 && paddedHead(g) > 0 && g.q.st == 1 && g.v.st == 1 &&
         g.y.st == 1 && (g.k.st == 1 || g.k.ss == 1);
}

// Whether every row (every dim row of K^T) starts 16 bytes apart from the aligned bases and holds
// whole 8-element chunks: then tiles load by cp.async and outputs store in pairs.
inline bool vectorizable(const void* q, const void* k, const void* v, const void* y,
                         const AttnGeom& g) {
  auto aligned = [](const void* p) { return reinterpret_cast<uintptr_t>(p) % 16 == 0; };
  auto rows8 = [](const AttnView& w, int64_t row) {
    return w.off % 8 == 0 && w.sb % 8 == 0 && w.sh % 8 == 0 && row % 8 == 0;
  };
  const bool kt = g.k.st != 1;
  return aligned(q) && aligned(k) && aligned(v) && aligned(y) && g.d % 8 == 0 && g.dv % 8 == 0 &&
         rows8(g.q, g.q.ss) && rows8(g.v, g.v.ss) && rows8(g.y, g.y.ss) &&
         (kt ? rows8(g.k, g.k.st) && g.sk % 8 == 0 : rows8(g.k, g.k.ss));
}

template <typename T, int D, bool KT>
cudaError_t launchDK(const T* q, const T* k, const T* v, const T* bias, T* y, const AttnGeom& g,
                     cudaStream_t st) {
  const bool vec = vectorizable(q, k, v, y, g);
  constexpr size_t smem = smemBytes<D>();
  if constexpr (smem > 48 * 1024) {
    const cudaError_t e = cudaFuncSetAttribute(
        flashKernel<T, D, KT>, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(smem));
    if (e != cudaSuccess) return e;
  }
  const int64_t blocks = g.B * g.H * ((g.sq + kRows - 1) / kRows);
  flashKernel<T, D, KT>
      <<<static_cast<unsigned>(blocks), kThreads, smem, st>>>(q, k, v, bias, y, g, vec);
  return cudaGetLastError();
}

template <typename T, int D>
cudaError_t launchD(const T* q, const T* k, const T* v, const T* bias, T* y, const AttnGeom& g,
                    cudaStream_t st) {
  return g.k.st == 1 ? launchDK<T, D, false>(q, k, v, bias, y, g, st)
                     : launchDK<T, D, true>(q, k, v, bias, y, g, st);
}

template <typename T>
cudaError_t launch(const T* q, const T* k, const T* v, const T* bias, T* y, const AttnGeom& g,
                   cudaStream_t st) {
  switch (paddedHead(g)) {
    case 32:
      return launchD<T, 32>(q, k, v, bias, y, g, st);
    case 64:
      return launchD<T, 64>(q, k, v, bias, y, g, st);
    default:
      return launchD<T, 128>(q, k, v, bias, y, g, st);
  }
}

}  // namespace opforge::ops::flash
