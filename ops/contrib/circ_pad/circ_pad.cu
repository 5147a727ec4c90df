// CUDA tactics of example::circ_pad_plugin. Circular padding only moves bytes, so kernels copy
// 2- or 4-byte words regardless of the float type.
//   1 cuda.generic  — one thread per output element, full index arithmetic.
//   2 cuda.rows     — one block per output row, coalesced.
//   3 cuda.vec_rows — one warp per output row, 16-byte stores: the row's source offset once per
//                     row (multiply-high division), interior vectors read with one 16-byte load
//                     when the source is aligned, else word by word through L1; wrapped borders
//                     word by word; scalar head and tail where the row is not 16-byte aligned.
//   4 cuda.vec_rows_tiles, 5 cuda.vec_rows128 — the same kernel, one block per 8 (4) rows, no
//                     grid-stride round;
//   6 cuda.vec_rows64_cs — one block per 2 rows, evict-first stores.
//   7 cuda.vec_pairs64_ilp3 — a warp per 2 rows taken as one run of vectors, each lane's loads of
//                     three rounds in flight before its stores (fastest on the H200, FP32).
#include "../../common/cuda_utils.cuh"
#include "../common/fast_divmod.h"
#include "../common/vec.cuh"
#include "circ_pad.h"

#include <string>

namespace opforge::contrib {

namespace {
constexpr int kMaxRank = 8;

struct PadArgs {
  int rank;
  int64_t in_dims[kMaxRank], out_dims[kMaxRank], before[kMaxRank], in_strides[kMaxRank];
};

PadArgs makeArgs(const CircPadGeometry& g) {
  PadArgs a{};
  a.rank = g.rank;
  int64_t s = 1;
  for (int d = g.rank - 1; d >= 0; --d) {
    a.in_dims[d] = g.in_dims[d];
    a.out_dims[d] = g.out_dims[d];
    a.before[d] = g.before[d];
    a.in_strides[d] = s;
    s *= g.in_dims[d];
  }
  return a;
}

__device__ __forceinline__ int64_t wrap(int64_t o, int64_t before, int64_t n) {
  int64_t s = (o - before) % n;
  return s < 0 ? s + n : s;
}

// Tactic 1: one thread per output element, full index arithmetic.
template <typename W>
__global__ void circPadGenericKernel(const W* __restrict__ x, W* __restrict__ y, int64_t n,
                                     PadArgs a) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n;
       i += int64_t(gridDim.x) * blockDim.x) {
    int64_t rem = i, off = 0;
    for (int d = a.rank - 1; d >= 0; --d) {
      const int64_t o = rem % a.out_dims[d];
      rem /= a.out_dims[d];
      off += wrap(o, a.before[d], a.in_dims[d]) * a.in_strides[d];
    }
    y[i] = x[off];
  }
}

// Tactic 2: one block per output row (last dimension); the source row is found once per block
// and the row is copied with coalesced reads and writes.
template <typename W>
__global__ void circPadRowsKernel(const W* __restrict__ x, W* __restrict__ y, int64_t rows,
                                  PadArgs a) {
  const int last = a.rank - 1;
  const int64_t w_in = a.in_dims[last], w_out = a.out_dims[last], b = a.before[last];
  for (int64_t row = blockIdx.x; row < rows; row += gridDim.x) {
    int64_t rem = row, off = 0;
    for (int d = last - 1; d >= 0; --d) {
      const int64_t o = rem % a.out_dims[d];
      rem /= a.out_dims[d];
      off += wrap(o, a.before[d], a.in_dims[d]) * a.in_strides[d];
    }
    const W* src = x + off;
    W* dst = y + row * w_out;
    for (int64_t j = threadIdx.x; j < w_out; j += blockDim.x) {
      int64_t s = j - b;
      if (s < 0 || s >= w_in) s = wrap(j, b, w_in);
      dst[j] = src[s];
    }
  }
}

// Tactic 3. 32-bit row/column arithmetic (checked by fitsVecRows).
struct VecPadArgs {
  int rank;
  FastDivmod out_div[kMaxRank];  // out_dims (all but the last are used to split a row index)
  FastDivmod in_div[kMaxRank];   // in_dims (wrap)
  uint32_t shift[kMaxRank];      // (o + shift) mod in_dim = (o - before) mod in_dim, shift >= 0
  int64_t in_strides[kMaxRank];
  uint32_t w_in, w_out, before;
};

VecPadArgs makeVecArgs(const CircPadGeometry& g) {
  VecPadArgs a{};
  a.rank = g.rank;
  int64_t s = 1;
  for (int d = g.rank - 1; d >= 0; --d) {
    a.out_div[d] = FastDivmod(static_cast<uint32_t>(g.out_dims[d]));
    a.in_div[d] = FastDivmod(static_cast<uint32_t>(g.in_dims[d]));
    const int64_t n = g.in_dims[d] > 0 ? g.in_dims[d] : 1;
    a.shift[d] = static_cast<uint32_t>((g.before[d] + n - 1) / n * n - g.before[d]);
    a.in_strides[d] = s;
    s *= g.in_dims[d];
  }
  a.w_in = static_cast<uint32_t>(g.in_dims.back());
  a.w_out = static_cast<uint32_t>(g.out_dims.back());
  a.before = static_cast<uint32_t>(g.before.back());
  return a;
}

template <typename W>
union Words16 {
  uint4 u;
  W b[16 / sizeof(W)];
};

// Stores: plain, or evict-first (`st.global.cs`) so the output streams past L2 and the wrapped
// input rows that are read twice stay there.
template <bool kStream>
__device__ __forceinline__ void storeVec(void* p, uint4 v) {
  if constexpr (kStream)
    __stcs(reinterpret_cast<uint4*>(p), v);
  else
    *reinterpret_cast<uint4*>(p) = v;
}

// Source offset (in words) of output row `row`: every dimension but the last wrapped.
__device__ __forceinline__ int64_t srcRowOffset(uint32_t row, const VecPadArgs& a) {
  uint32_t rem = row;
  int64_t off = 0;
  for (int d = a.rank - 2; d >= 0; --d) {
    uint32_t q, o, src, unused;
    a.out_div[d].divmod(rem, q, o);
    rem = q;
    a.in_div[d].divmod(o + a.shift[d], unused, src);
    off += int64_t(src) * a.in_strides[d];
  }
  return off;
}

// Source column of output column j.
__device__ __forceinline__ uint32_t srcCol(uint32_t j, const VecPadArgs& a) {
  const uint32_t c = j - a.before;
  if (j >= a.before && c < a.w_in) return c;
  uint32_t q, r;
  a.in_div[a.rank - 1].divmod(j + a.shift[a.rank - 1], q, r);
  return r;
}

// The 16 bytes of output columns [j0, j0 + V) of a row whose source row is `s`: one 16-byte load
// when the source is aligned interior, else word by word (the words of a warp's shifted vectors
// share sectors: one instruction misses in L1, the others hit).
template <typename W>
__device__ __forceinline__ uint4 loadVec(const W* __restrict__ s, uint32_t j0,
                                         const VecPadArgs& a) {
  constexpr int V = 16 / sizeof(W);
  Words16<W> p;
  const uint32_t c0 = j0 - a.before;
  if (j0 >= a.before && c0 + V <= a.w_in && cu::aligned16(s + c0)) {
    p.u = __ldg(reinterpret_cast<const uint4*>(s + c0));
  } else if (j0 >= a.before && c0 + V <= a.w_in) {
#pragma unroll
    for (int e = 0; e < V; ++e) p.b[e] = __ldg(s + c0 + e);
  } else {
#pragma unroll
    for (int e = 0; e < V; ++e) p.b[e] = __ldg(s + srcCol(j0 + e, a));
  }
  return p.u;
}

// One output row by one warp: scalar head up to 16-byte alignment, 16-byte vectors, scalar tail.
template <typename W, bool kStream>
__device__ __forceinline__ void copyRow(const W* __restrict__ s, W* __restrict__ dst, int lane,
                                        const VecPadArgs& a) {
  constexpr int V = 16 / sizeof(W);
  uint32_t head =
      static_cast<uint32_t>((16 - (reinterpret_cast<uintptr_t>(dst) & 15)) & 15) / sizeof(W);
  if (head > a.w_out) head = a.w_out;
  for (uint32_t j = lane; j < head; j += 32) dst[j] = __ldg(s + srcCol(j, a));
  const uint32_t nv = (a.w_out - head) / V;
  for (uint32_t i = lane; i < nv; i += 32) {
    const uint32_t j0 = head + i * V;
    storeVec<kStream>(dst + j0, loadVec<W>(s, j0, a));
  }
  for (uint32_t j = head + nv * V + lane; j < a.w_out; j += 32) dst[j] = __ldg(s + srcCol(j, a));
}

template <typename W, bool kStream = false>
__global__ void __launch_bounds__(256)
    circPadVecRowsKernel(const W* __restrict__ x, W* __restrict__ y, uint32_t rows,
                         const VecPadArgs a) {
  const int lane = threadIdx.x & 31;
  const uint32_t nwarps = gridDim.x * (blockDim.x >> 5);
  for (uint32_t row = blockIdx.x * (blockDim.x >> 5) + (threadIdx.x >> 5); row < rows;
       row += nwarps)
    copyRow<W, kStream>(x + srcRowOffset(row, a), y + int64_t(row) * a.w_out, lane, a);
}

// K consecutive output rows per warp. When every row is whole 16-byte vectors, a warp's rows are
// one contiguous run of vectors dealt to the lanes as one: fewer idle lanes in the last round, and
// the sector that two rows share is written by one instruction. Each lane loads its vectors of
// kIlp rounds before storing them, so a warp has kIlp rounds of loads in flight. Rows that are
// not whole vectors go row by row.
template <typename W, int K, bool kStream, int kIlp>
__global__ void __launch_bounds__(256)
    circPadVecGroupKernel(const W* __restrict__ x, W* __restrict__ y, uint32_t rows,
                          const VecPadArgs a) {
  constexpr int V = 16 / sizeof(W);
  const int lane = threadIdx.x & 31;
  const uint32_t r0 = (blockIdx.x * (blockDim.x >> 5) + (threadIdx.x >> 5)) * K;
  if (r0 >= rows) return;
  const uint32_t nrows = rows - r0 < K ? rows - r0 : K;
  if (a.w_out % V != 0 || !cu::aligned16(y)) {
    for (uint32_t k = 0; k < nrows; ++k)
      copyRow<W, kStream>(x + srcRowOffset(r0 + k, a), y + int64_t(r0 + k) * a.w_out, lane, a);
    return;
  }
  const W* src[K];
#pragma unroll
  for (int k = 0; k < K; ++k) src[k] = x + srcRowOffset(r0 + (k < nrows ? k : 0), a);
  const uint32_t nv = a.w_out / V, total = nrows * nv;
  W* dst = y + int64_t(r0) * a.w_out;
  auto load = [&](uint32_t t) {  // vector t of the warp's run
    uint32_t i = t;
    const W* s = src[0];
#pragma unroll
    for (int k = 1; k < K; ++k)
      if (i >= nv) {
        i -= nv;
        s = src[k];
      }
    return loadVec<W>(s, i * V, a);
  };
  for (uint32_t t = lane; t < total; t += 32 * kIlp) {
    uint4 v[kIlp];
#pragma unroll
    for (int u = 0; u < kIlp; ++u)
      if (t + 32 * u < total) v[u] = load(t + 32 * u);
#pragma unroll
    for (int u = 0; u < kIlp; ++u)
      if (t + 32 * u < total) storeVec<kStream>(dst + int64_t(t + 32 * u) * V, v[u]);
  }
}

bool fitsArgs(const AttrMap&, std::span<const TensorDesc> in, std::span<const TensorDesc>) {
  return in[0].rank() >= 1 && in[0].rank() <= kMaxRank;
}

// Tactic 3 splits row indices and coordinates in 32 bits.
bool fitsVecRows(const AttrMap& attrs, std::span<const TensorDesc> in,
                 std::span<const TensorDesc> out) {
  if (!fitsArgs(attrs, in, out)) return false;
  constexpr int64_t kMax = int64_t{1} << 31;
  int64_t rows = 1;
  for (int d = 0; d < out[0].rank(); ++d) {
    if (out[0].dims[d] >= kMax / 2 || in[0].dims[d] >= kMax / 2) return false;
    if (d + 1 < out[0].rank()) rows *= out[0].dims[d];
  }
  return rows < kMax;
}

Status circPadGeneric(KernelContext& ctx, std::span<const Tensor> in, std::span<const Tensor> out) {
  const auto g = circPadGeometry(ctx.attr<std::vector<int32_t>>("pads"), in[0].desc.dims);
  const int64_t n = out[0].numel();
  if (n == 0) return Status::ok();
  const PadArgs a = makeArgs(g);
  return ops::visitDeviceBySize<2 | 4>(in[0].desc.dtype, "circ_pad", [&](auto w) -> Status {
    using W = typename decltype(w)::type;
    circPadGenericKernel<W><<<ops::gridFor(n, 256), 256, 0, ops::streamOf(ctx)>>>(
        static_cast<const W*>(in[0].data), static_cast<W*>(out[0].data), n, a);
    return ops::lastLaunch("circ_pad cuda.generic");
  });
}

Status circPadRows(KernelContext& ctx, std::span<const Tensor> in, std::span<const Tensor> out) {
  const auto g = circPadGeometry(ctx.attr<std::vector<int32_t>>("pads"), in[0].desc.dims);
  const int64_t n = out[0].numel();
  if (n == 0) return Status::ok();
  const int64_t rows = n / g.out_dims.back();
  const PadArgs a = makeArgs(g);
  const int threads = g.out_dims.back() >= 256 ? 256 : 128;
  return ops::visitDeviceBySize<2 | 4>(in[0].desc.dtype, "circ_pad", [&](auto w) -> Status {
    using W = typename decltype(w)::type;
    const unsigned blocks = static_cast<unsigned>(rows < 65535 * 16 ? rows : 65535 * 16);
    circPadRowsKernel<W><<<blocks, threads, 0, ops::streamOf(ctx)>>>(
        static_cast<const W*>(in[0].data), static_cast<W*>(out[0].data), rows, a);
    return ops::lastLaunch("circ_pad cuda.rows");
  });
}
// kGroup 0: circPadVecRowsKernel (kAllTiles: a warp per row, else one wave of a grid-stride loop);
// kGroup K > 0: circPadVecGroupKernel, K rows per warp, kIlp rounds of loads in flight.
template <bool kAllTiles, int kThreads = 256, bool kStream = false, int kGroup = 0, int kIlp = 1>
Status circPadVecRows(KernelContext& ctx, std::span<const Tensor> in, std::span<const Tensor> out) {
  const auto g = circPadGeometry(ctx.attr<std::vector<int32_t>>("pads"), in[0].desc.dims);
  const int64_t n = out[0].numel();
  if (n == 0) return Status::ok();
  const auto rows = static_cast<uint32_t>(n / g.out_dims.back());
  const VecPadArgs a = makeVecArgs(g);
  return ops::visitDeviceBySize<2 | 4>(in[0].desc.dtype, "circ_pad", [&](auto w) -> Status {
    using W = typename decltype(w)::type;
    const auto* x = static_cast<const W*>(in[0].data);
    auto* y = static_cast<W*>(out[0].data);
    if constexpr (kGroup > 0) {
      const int64_t warps = (int64_t(rows) + kGroup - 1) / kGroup;
      circPadVecGroupKernel<W, kGroup, kStream, kIlp>
          <<<cu::gridAll(warps * 32, kThreads), kThreads, 0, ops::streamOf(ctx)>>>(x, y, rows, a);
    } else {
      const unsigned blocks =
          kAllTiles ? cu::gridAll(int64_t(rows) * 32, kThreads)
                    : cu::gridFill(circPadVecRowsKernel<W, kStream>, int64_t(rows) * 32, kThreads);
      circPadVecRowsKernel<W, kStream><<<blocks, kThreads, 0, ops::streamOf(ctx)>>>(x, y, rows, a);
    }
    static const std::string what =
        "circ_pad vec_rows kernel (" + std::to_string(kThreads) + "-thread blocks" +
        (kGroup > 0
             ? ", " + std::to_string(kGroup) + " rows per warp"
             : (kAllTiles ? ", a block per " + std::to_string(kThreads / 32) + " rows" : "")) +
        (kIlp > 1 ? ", loads of " + std::to_string(kIlp) + " rounds first" : "") +
        (kStream ? ", evict-first stores" : "") + ")";
    return ops::lastLaunch(what.c_str());
  });
}

}  // namespace

OPFORGE_TACTICS("example::circ_pad_plugin", [](OpDef& d) {
  d.tactic(1, "cuda.generic", circPadGeneric, fitsArgs);
  d.tactic(2, "cuda.rows", circPadRows, fitsArgs);
  d.tactic(3, "cuda.vec_rows", circPadVecRows<false>, fitsVecRows);
  d.tactic(4, "cuda.vec_rows_tiles", circPadVecRows<true>,
           fitsVecRows);  // a warp per row, no grid-stride round
  d.tactic(5, "cuda.vec_rows128", circPadVecRows<true, 128>, fitsVecRows);
  d.tactic(6, "cuda.vec_rows64_cs", circPadVecRows<true, 64, true>, fitsVecRows);
  d.tactic(7, "cuda.vec_pairs64_ilp3", circPadVecRows<true, 64, false, 2, 3>, fitsVecRows);
});

}  // namespace opforge::contrib
