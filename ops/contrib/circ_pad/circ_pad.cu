// CUDA tactics of example::circ_pad_plugin. Circular padding only moves bytes, so kernels copy
// 2- or 4-byte words regardless of the float type.
//   1 cuda.generic  — one thread per output element, full index arithmetic.
//   2 cuda.rows     — one block per output row, coalesced.
//   3 cuda.vec_rows — one warp per output row, 16-byte stores: the row's source offset once per
//                     row (multiply-high division), interior vectors read with one 16-byte load
//                     when the source is aligned, else word by word through L1; wrapped borders
//                     word by word; scalar head and tail where the row is not 16-byte aligned.
//   5 cuda.bulk_rows — whole rows through shared memory with the bulk-copy engine (sm_90): rows of
//                     whole 16-byte vectors, 16-byte aligned tensors (else tactic 4 runs).
#include <cuda/ptx>

#include "../../common/cuda_utils.cuh"
#include "../common/fast_divmod.h"
#include "../common/vec.cuh"
#include "circ_pad.h"

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

template <typename W>
__global__ void __launch_bounds__(256)
    circPadVecRowsKernel(const W* __restrict__ x, W* __restrict__ y, uint32_t rows,
                         const VecPadArgs a) {
  constexpr int V = 16 / sizeof(W);
  const int lane = threadIdx.x & 31;
  const uint32_t nwarps = gridDim.x * (blockDim.x >> 5);
  const int last = a.rank - 1;
  const uint32_t sh = a.shift[last];
  for (uint32_t row = blockIdx.x * (blockDim.x >> 5) + (threadIdx.x >> 5); row < rows;
       row += nwarps) {
    uint32_t rem = row;
    int64_t off = 0;
    for (int d = last - 1; d >= 0; --d) {
      uint32_t q, o, src, unused;
      a.out_div[d].divmod(rem, q, o);
      rem = q;
      a.in_div[d].divmod(o + a.shift[d], unused, src);
      off += int64_t(src) * a.in_strides[d];
    }
    const W* s = x + off;
    W* dst = y + int64_t(row) * a.w_out;
    auto col = [&](uint32_t j) {  // source column of output column j
      const uint32_t c = j - a.before;
      if (j >= a.before && c < a.w_in) return c;
      uint32_t q, r;
      a.in_div[last].divmod(j + sh, q, r);
      return r;
    };
    uint32_t head =
        static_cast<uint32_t>((16 - (reinterpret_cast<uintptr_t>(dst) & 15)) & 15) / sizeof(W);
    if (head > a.w_out) head = a.w_out;
    for (uint32_t j = lane; j < head; j += 32) dst[j] = __ldg(s + col(j));
    const uint32_t nv = (a.w_out - head) / V;
    for (uint32_t i = lane; i < nv; i += 32) {
      const uint32_t j0 = head + i * V;
      Words16<W> p;
      const uint32_t c0 = j0 - a.before;
      if (j0 >= a.before && c0 + V <= a.w_in && cu::aligned16(s + c0)) {
        p.u = __ldg(reinterpret_cast<const uint4*>(s + c0));
      } else if (j0 >= a.before && c0 + V <= a.w_in) {
#pragma unroll
        for (int e = 0; e < V; ++e) p.b[e] = __ldg(s + c0 + e);
      } else {
#pragma unroll
        for (int e = 0; e < V; ++e) p.b[e] = __ldg(s + col(j0 + e));
      }
      *reinterpret_cast<uint4*>(dst + j0) = p.u;
    }
    for (uint32_t j = head + nv * V + lane; j < a.w_out; j += 32) dst[j] = __ldg(s + col(j));
  }
}

// Tactic 5. A block takes chunks of K consecutive output rows (contiguous in y). Each row's source
// row arrives in shared memory by one bulk copy; the block builds the K output rows in shared
// memory — interior vectors from two aligned 16-byte shared loads (OFF: the interior's constant
// misalignment in words), wrapped borders word by word — and one bulk store writes them. Two
// stages: the next chunk loads while this one is built; an output buffer is reused once the bulk
// store that read it is done.
struct BulkArgs {
  VecPadArgs v;
  uint32_t rows, chunk_rows, chunks, in_stage_words;
  FastDivmod vec_per_row;  // output vectors per row
};

__device__ __forceinline__ int64_t sourceRow(const VecPadArgs& a, uint32_t row) {
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

template <typename W, int OFF>
__global__ void __launch_bounds__(256)
    circPadBulkKernel(const W* __restrict__ x, W* __restrict__ y, const BulkArgs a) {
  namespace ptx = cuda::ptx;
  constexpr int V = 16 / sizeof(W);
  extern __shared__ __align__(128) unsigned char smem[];
  __shared__ uint64_t bar[2];
  const uint32_t w_in = a.v.w_in, w_out = a.v.w_out, before = a.v.before;
  const uint32_t in_row_bytes = w_in * sizeof(W);
  W* in_s[2] = {reinterpret_cast<W*>(smem), reinterpret_cast<W*>(smem) + a.in_stage_words};
  W* out_s[2] = {in_s[1] + a.in_stage_words, in_s[1] + a.in_stage_words + a.chunk_rows * w_out};
  const int tid = threadIdx.x, lane = tid & 31;
  if (tid == 0) {
    ptx::mbarrier_init(&bar[0], 1);
    ptx::mbarrier_init(&bar[1], 1);
  }
  __syncthreads();
  auto issue = [&](uint32_t chunk, int s) {  // warp 0
    const uint32_t r0 = chunk * a.chunk_rows, left = a.rows - r0,
                   n = left < a.chunk_rows ? left : a.chunk_rows;
    if (lane == 0)
      ptx::mbarrier_arrive_expect_tx(ptx::sem_release, ptx::scope_cta, ptx::space_shared, &bar[s],
                                     n * in_row_bytes);
    for (uint32_t r = lane; r < n; r += 32)
      ptx::cp_async_bulk(ptx::space_cluster, ptx::space_global, in_s[s] + r * w_in,
                         x + sourceRow(a.v, r0 + r), in_row_bytes, &bar[s]);
  };
  uint32_t phase[2] = {0, 0};
  uint32_t chunk = blockIdx.x;
  if (chunk < a.chunks && tid < 32) issue(chunk, 0);
  const uint32_t sh = a.v.shift[a.v.rank - 1];
  for (int k = 0; chunk < a.chunks; ++k, chunk += gridDim.x) {
    const int s = k & 1;
    const uint32_t next = chunk + gridDim.x;
    if (next < a.chunks && tid < 32) issue(next, s ^ 1);
    while (!ptx::mbarrier_try_wait_parity(&bar[s], phase[s])) {
    }
    phase[s] ^= 1;
    if (tid == 0)
      ptx::cp_async_bulk_wait_group_read(ptx::n32_t<1>{});  // out_s[s]'s last store has read it
    __syncthreads();
    const uint32_t r0 = chunk * a.chunk_rows, left = a.rows - r0,
                   n = left < a.chunk_rows ? left : a.chunk_rows;
    const W* src = in_s[s];
    W* dst = out_s[s];
    const uint32_t nvec = n * a.vec_per_row.d;
    for (uint32_t v = tid; v < nvec; v += blockDim.x) {
      uint32_t r, jv;
      a.vec_per_row.divmod(v, r, jv);
      const uint32_t j0 = jv * V, c0 = j0 - before;
      const W* row = src + r * w_in;
      Words16<W> p;
      if (j0 >= before && c0 + V <= w_in) {
        const uint4* base = reinterpret_cast<const uint4*>(row + (c0 - OFF));
        if constexpr (OFF == 0) {
          p.u = base[0];
        } else {
          Words16<W> lo, hi;
          lo.u = base[0];
          hi.u = base[1];
#pragma unroll
          for (int e = 0; e < V; ++e) p.b[e] = e + OFF < V ? lo.b[e + OFF] : hi.b[e + OFF - V];
        }
      } else {
#pragma unroll
        for (int e = 0; e < V; ++e) {
          const uint32_t j = j0 + e, c = j - before;
          uint32_t col = c;
          if (!(j >= before && c < w_in)) {
            uint32_t q;
            a.v.in_div[a.v.rank - 1].divmod(j + sh, q, col);
          }
          p.b[e] = row[col];
        }
      }
      *reinterpret_cast<uint4*>(dst + r * w_out + j0) = p.u;
    }
    ptx::fence_proxy_async(ptx::space_shared);  // the bulk store reads what this thread wrote
    __syncthreads();
    if (tid == 0) {
      ptx::cp_async_bulk(ptx::space_global, ptx::space_shared, y + int64_t(r0) * w_out, dst,
                         n * w_out * sizeof(W));
      ptx::cp_async_bulk_commit_group();
    }
  }
  if (tid == 0) ptx::cp_async_bulk_wait_group_read(ptx::n32_t<0>{});
}

template <typename F>
Status launchBySize(size_t es, F&& f) {
  if (es == 4) return f(uint32_t{});
  if (es == 2) return f(uint16_t{});
  return Status::unsupported("circ_pad CUDA tactics handle 2- and 4-byte types");
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
  return launchBySize(dtypeSize(in[0].desc.dtype), [&](auto w) -> Status {
    using W = decltype(w);
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
  return launchBySize(dtypeSize(in[0].desc.dtype), [&](auto w) -> Status {
    using W = decltype(w);
    const unsigned blocks = static_cast<unsigned>(rows < 65535 * 16 ? rows : 65535 * 16);
    circPadRowsKernel<W><<<blocks, threads, 0, ops::streamOf(ctx)>>>(
        static_cast<const W*>(in[0].data), static_cast<W*>(out[0].data), rows, a);
    return ops::lastLaunch("circ_pad cuda.rows");
  });
}
template <bool kAllTiles>
Status circPadVecRows(KernelContext& ctx, std::span<const Tensor> in, std::span<const Tensor> out) {
  const auto g = circPadGeometry(ctx.attr<std::vector<int32_t>>("pads"), in[0].desc.dims);
  const int64_t n = out[0].numel();
  if (n == 0) return Status::ok();
  const auto rows = static_cast<uint32_t>(n / g.out_dims.back());
  const VecPadArgs a = makeVecArgs(g);
  return launchBySize(dtypeSize(in[0].desc.dtype), [&](auto w) -> Status {
    using W = decltype(w);
    const unsigned blocks = kAllTiles
                                ? cu::gridAll(int64_t(rows) * 32, 256)
                                : cu::gridFill(circPadVecRowsKernel<W>, int64_t(rows) * 32, 256);
    circPadVecRowsKernel<W><<<blocks, 256, 0, ops::streamOf(ctx)>>>(
        static_cast<const W*>(in[0].data), static_cast<W*>(out[0].data), rows, a);
    return ops::lastLaunch(kAllTiles ? "circ_pad cuda.vec_rows_tiles" : "circ_pad cuda.vec_rows");
  });
}

// Tactic 5 needs whole 16-byte vectors per row, rows within the 32-bit limits of tactic 3, and
// shared memory for two stages of at least one row.
constexpr size_t kBulkStageBytes = 24 * 1024;
bool fitsBulkRows(const AttrMap& attrs, std::span<const TensorDesc> in,
                  std::span<const TensorDesc> out) {
  if (!fitsVecRows(attrs, in, out)) return false;
  const size_t es = dtypeSize(in[0].dtype);
  if (es != 2 && es != 4) return false;
  const size_t in_row = static_cast<size_t>(in[0].dims.back()) * es,
               out_row = static_cast<size_t>(out[0].dims.back()) * es;
  return in_row > 0 && in_row % 16 == 0 && out_row % 16 == 0 &&
         in_row + out_row + 32 <= 2 * kBulkStageBytes;
}

Status circPadBulkRows(KernelContext& ctx, std::span<const Tensor> in,
                       std::span<const Tensor> out) {
  if (!cu::aligned16(in[0].data) || !cu::aligned16(out[0].data))
    return circPadVecRows<true>(ctx, in, out);
  const auto g = circPadGeometry(ctx.attr<std::vector<int32_t>>("pads"), in[0].desc.dims);
  const int64_t n = out[0].numel();
  if (n == 0) return Status::ok();
  BulkArgs a{};
  a.v = makeVecArgs(g);
  a.rows = static_cast<uint32_t>(n / g.out_dims.back());
  const size_t es = dtypeSize(in[0].desc.dtype), V = 16 / es;
  const size_t row_bytes = (a.v.w_in + a.v.w_out) * es;
  a.chunk_rows = static_cast<uint32_t>(std::max<size_t>(1, kBulkStageBytes / row_bytes));
  a.chunks = (a.rows + a.chunk_rows - 1) / a.chunk_rows;
  // Input stage: the chunk's rows plus slack for the interior's second vector, in whole vectors.
  a.in_stage_words = static_cast<uint32_t>((a.chunk_rows * a.v.w_in + 2 * V + V - 1) / V * V);
  a.vec_per_row = FastDivmod(static_cast<uint32_t>(a.v.w_out / V));
  const size_t smem = 2 * (a.in_stage_words + size_t{a.chunk_rows} * a.v.w_out) * es;
  const int off =
      static_cast<int>((V - a.v.before % V) % V);  // (c0 mod V) for the interior vectors
  auto launch = [&](auto kernel, auto w) -> Status {
    using W = decltype(w);
    if (cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                             static_cast<int>(smem)) != cudaSuccess)
      return ops::lastLaunch("circ_pad cuda.bulk_rows (shared memory)");
    const unsigned blocks = cu::gridFill(kernel, int64_t(a.chunks) * 256, 256, smem);
    kernel<<<blocks, 256, smem, ops::streamOf(ctx)>>>(static_cast<const W*>(in[0].data),
                                                      static_cast<W*>(out[0].data), a);
    return ops::lastLaunch("circ_pad cuda.bulk_rows");
  };
  if (es == 4) {
    switch (off) {
      case 0:
        return launch(circPadBulkKernel<uint32_t, 0>, uint32_t{});
      case 1:
        return launch(circPadBulkKernel<uint32_t, 1>, uint32_t{});
      case 2:
        return launch(circPadBulkKernel<uint32_t, 2>, uint32_t{});
      default:
        return launch(circPadBulkKernel<uint32_t, 3>, uint32_t{});
    }
  }
  switch (off) {
    case 0:
      return launch(circPadBulkKernel<uint16_t, 0>, uint16_t{});
    case 1:
      return launch(circPadBulkKernel<uint16_t, 1>, uint16_t{});
    case 2:
      return launch(circPadBulkKernel<uint16_t, 2>, uint16_t{});
    case 3:
      return launch(circPadBulkKernel<uint16_t, 3>, uint16_t{});
    case 4:
      return launch(circPadBulkKernel<uint16_t, 4>, uint16_t{});
    case 5:
      return launch(circPadBulkKernel<uint16_t, 5>, uint16_t{});
    case 6:
      return launch(circPadBulkKernel<uint16_t, 6>, uint16_t{});
    default:
      return launch(circPadBulkKernel<uint16_t, 7>, uint16_t{});
  }
}
}  // namespace

OPFORGE_TACTICS("example::circ_pad_plugin", [](OpDef& d) {
  d.tactic(1, "cuda.generic", circPadGeneric, fitsArgs);
  d.tactic(2, "cuda.rows", circPadRows, fitsArgs);
  d.tactic(3, "cuda.vec_rows", circPadVecRows<false>, fitsVecRows);
  d.tactic(4, "cuda.vec_rows_tiles", circPadVecRows<true>,
           fitsVecRows);  // a warp per row, no grid-stride round
  d.tactic(5, "cuda.bulk_rows", circPadBulkRows, fitsBulkRows);
});

}  // namespace opforge::contrib
