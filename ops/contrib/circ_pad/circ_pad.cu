// CUDA tactics of example::circ_pad_plugin. Circular padding only moves bytes, so kernels copy
// 2- or 4-byte words regardless of the float type.
#include "../../common/cuda_utils.cuh"
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
__global__ void circPadGenericKernel(const W* __restrict__ x, W* __restrict__ y, int64_t n, PadArgs a) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x) {
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
__global__ void circPadRowsKernel(const W* __restrict__ x, W* __restrict__ y, int64_t rows, PadArgs a) {
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

template <typename F>
Status launchBySize(size_t es, F&& f) {
  if (es == 4) return f(uint32_t{});
  if (es == 2) return f(uint16_t{});
  return Status::unsupported("circ_pad CUDA tactics handle 2- and 4-byte types");
}

bool fitsArgs(const AttrMap&, std::span<const TensorDesc> in, std::span<const TensorDesc>) {
  return in[0].rank() >= 1 && in[0].rank() <= kMaxRank;
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
    circPadRowsKernel<W><<<blocks, threads, 0, ops::streamOf(ctx)>>>(static_cast<const W*>(in[0].data),
                                                                      static_cast<W*>(out[0].data), rows, a);
    return ops::lastLaunch("circ_pad cuda.rows");
  });
}
}  // namespace

OPFORGE_TACTICS("example::circ_pad_plugin", [](OpDef& d) {
  d.tactic(1, "cuda.generic", circPadGeneric, fitsArgs);
  d.tactic(2, "cuda.rows", circPadRows, fitsArgs);
});

}  // namespace opforge::contrib
