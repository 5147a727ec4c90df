// CUDA tactics of ai.onnx::Det. Both factor each matrix in double with det.h's elimination (the
// reference's operations in the reference's order, products and differences never fused into an
// FMA), so they match the reference bit for bit in every float type; each result is rounded once.
//   cuda.lu_thread  a thread per matrix, the matrix in the thread's local memory: M <= 8.
//   cuda.lu_block   a block of 128 threads per matrix, any M: the pivot search is a block
//                   reduction, the elimination of each step is spread over the threads. The
//                   matrix lives in shared memory up to M = 64 (32 KiB), beyond that in the
//                   workspace (one M x M double matrix per resident block; the grid is limited so
//                   that the workspace stays near 256 MiB, and at least one matrix).
#include "det.h"

#include <algorithm>

#include "../common/cuda_common.cuh"

namespace opforge::ops {
namespace {

constexpr int64_t kThreadMaxM = 8;
constexpr int64_t kSharedMaxM = 64;
constexpr int kBlock = 128;
constexpr int64_t kMaxBlocks = 132 * 8;
constexpr int64_t kWorkspaceTarget = int64_t{256} << 20;

template <typename S>
__global__ void detThreadKernel(const S* __restrict__ x, S* __restrict__ y, int64_t mats,
                                int64_t m) {
  using C = typename DNum<S>::C;
  double a[kThreadMaxM * kThreadMaxM];
  const int64_t step = int64_t(gridDim.x) * blockDim.x;
  for (int64_t b = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; b < mats; b += step) {
    for (int64_t e = 0; e < m * m; ++e) a[e] = static_cast<double>(DNum<S>::load(x[b * m * m + e]));
    y[b] = DNum<S>::store(static_cast<C>(luDeterminant(a, m)));
  }
}

// Keeps the better of two pivot candidates (row m: none yet).
__device__ __forceinline__ void takeBetter(double& best, int64_t& row, double v, int64_t i,
                                           int64_t m) {
  if (i < m && (row == m || detBetterPivot(v, i, best, row))) best = v, row = i;
}

// One block per matrix (grid-stride over the matrices). `ws`: the blocks' matrices in global
// memory, or nullptr for dynamic shared memory.
template <typename S>
__global__ void __launch_bounds__(kBlock)
    detBlockKernel(const S* __restrict__ x, S* __restrict__ y, int64_t mats, int64_t m,
                   double* __restrict__ ws) {
  using C = typename DNum<S>::C;
  extern __shared__ double smem[];
  __shared__ double warp_best[kBlock / 32];
  __shared__ int64_t warp_row[kBlock / 32];
  __shared__ int64_t piv_row;
  __shared__ double piv_val;
  double* a = ws ? ws + int64_t(blockIdx.x) * m * m : smem;
  const int tid = threadIdx.x, lane = tid % 32, warp = tid / 32;
  for (int64_t b = blockIdx.x; b < mats; b += gridDim.x) {
    for (int64_t e = tid; e < m * m; e += kBlock)
      a[e] = static_cast<double>(DNum<S>::load(x[b * m * m + e]));
    __syncthreads();
    double det = 1;  // every thread keeps the same product
    bool negate = false, singular = false;
    for (int64_t k = 0; k < m; ++k) {
      double best = 0;
      int64_t row = m;
      for (int64_t i = k + tid; i < m; i += kBlock) takeBetter(best, row, fabs(a[i * m + k]), i, m);
      for (int off = 16; off > 0; off /= 2) {
        const double v = __shfl_down_sync(0xffffffffu, best, off);
        const long long i = __shfl_down_sync(0xffffffffu, static_cast<long long>(row), off);
        takeBetter(best, row, v, i, m);
      }
      if (lane == 0) warp_best[warp] = best, warp_row[warp] = row;
      __syncthreads();
      if (tid == 0) {
        for (int w = 1; w < kBlock / 32; ++w) takeBetter(best, row, warp_best[w], warp_row[w], m);
        piv_row = row;
        piv_val = a[row * m + k];
      }
      __syncthreads();
      const int64_t p = piv_row;
      const double pv = piv_val;
      if (pv == 0) {
        singular = true;
        break;
      }
      if (p != k) {
        negate = !negate;
        for (int64_t j = k + tid; j < m; j += kBlock) {
          const double t = a[k * m + j];
          a[k * m + j] = a[p * m + j];
          a[p * m + j] = t;
        }
      }
      det = detMul(det, pv);
      __syncthreads();
      const int64_t w = m - k - 1;
      for (int64_t e = tid; e < w * w; e += kBlock) {
        const int64_t i = k + 1 + e / w, j = k + 1 + e % w;
        const double f = a[i * m + k] / pv;
        a[i * m + j] = detSub(a[i * m + j], detMul(f, a[k * m + j]));
      }
      __syncthreads();
    }
    if (tid == 0) y[b] = DNum<S>::store(static_cast<C>(singular ? 0.0 : negate ? -det : det));
    __syncthreads();  // the next matrix overwrites `a`
  }
}

struct Dims {
  int64_t mats, m;
};
Dims dimsOf(const TensorDesc& x) {
  const int r = x.rank();
  return {prodOf(x.dims, 0, r - 2), x.dims[r - 1]};
}

// The block tactic's grid, and whether its matrices live in shared memory.
int64_t blockGrid(Dims d) {
  int64_t g = std::min(d.mats, kMaxBlocks);
  if (d.m > kSharedMaxM) g = std::min(g, std::max<int64_t>(1, kWorkspaceTarget / (d.m * d.m * 8)));
  return std::max<int64_t>(g, 1);
}

Status detThread(KernelContext& k, std::span<const Tensor> in, std::span<const Tensor> out) {
  const Dims d = dimsOf(in[0].desc);
  if (d.mats == 0) return Status::ok();
  return visitDevice<kFloats>(in[0].desc.dtype, "Det", [&](auto tag) -> Status {
    using S = typename decltype(tag)::type;
    detThreadKernel<S><<<blocksFor(d.mats), kThreads, 0, streamOf(k)>>>(
        static_cast<const S*>(in[0].data), static_cast<S*>(out[0].data), d.mats, d.m);
    return launched("Det");
  });
}

Status detBlock(KernelContext& k, std::span<const Tensor> in, std::span<const Tensor> out) {
  const Dims d = dimsOf(in[0].desc);
  if (d.mats == 0) return Status::ok();
  const bool shared = d.m <= kSharedMaxM;
  const size_t smem = shared ? static_cast<size_t>(d.m * d.m) * sizeof(double) : 0;
  double* ws = shared ? nullptr : static_cast<double*>(k.workspace());
  const int64_t grid = blockGrid(d);
  return visitDevice<kFloats>(in[0].desc.dtype, "Det", [&](auto tag) -> Status {
    using S = typename decltype(tag)::type;
    detBlockKernel<S><<<static_cast<unsigned>(grid), kBlock, smem, streamOf(k)>>>(
        static_cast<const S*>(in[0].data), static_cast<S*>(out[0].data), d.mats, d.m, ws);
    return launched("Det");
  });
}

bool threadApplies(const AttrMap&, std::span<const TensorDesc> in,
                   std::span<const TensorDesc> out) {
  return allLinear(in, out) && dimsOf(in[0]).m <= kThreadMaxM;
}

size_t blockWorkspace(const AttrMap&, std::span<const TensorDesc> in, std::span<const TensorDesc>) {
  const Dims d = dimsOf(in[0]);
  if (d.m <= kSharedMaxM || d.mats == 0) return 0;
  return static_cast<size_t>(blockGrid(d) * d.m * d.m) * sizeof(double);
}

}  // namespace

OPFORGE_TACTICS("ai.onnx::Det", [](OpDef& d) {
  d.tactic(1, "cuda.lu_thread", detThread, threadApplies);
  d.tactic(2, "cuda.lu_block", detBlock, linearOnly, blockWorkspace);
});

}  // namespace opforge::ops
