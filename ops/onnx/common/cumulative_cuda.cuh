// cumulative_cuda.cuh — CumSum / CumProd on the device. The axis is a run-time input on the device:
// a one-thread kernel turns it into the (outer, n, inner) geometry in the workspace (an axis out of
// range is a run-time error, opforge/device_error.h), and the scan kernels read it there.
//   1 cuda.lines      one thread per line, in order (coalesced over the inner axis);
//   2 cuda.blockscan  one block per line, cub::BlockScan over 1024-element chunks with a running
//                     prefix (long lines).
// Floats accumulate in double, integers in their own type (wrapping), as the reference.
#pragma once

#include <cub/block/block_scan.cuh>

#include "cuda_common.cuh"

namespace opforge::ops {

struct ScanGeom {
  int64_t outer, n, inner, lines;
  int ok;
};

struct ScanDims {
  int rank;
  int64_t d[kMaxDims];
};

static __global__ void scanGeomKernel(const void* axis, bool a64, ScanDims dims, ScanGeom* g,
                                      DeviceErrorRecord* rec) {
  const int r = dims.rank;
  const int64_t given = loadIndex(axis, a64, 0);
  ScanGeom out{0, 0, 0, 0, 0};
  if (given < -r || given >= r) {
    reportDeviceError(rec, kDeviceErrorValue, 1, given, 0, r, 0);
  } else {
    const int a = static_cast<int>(given < 0 ? given + r : given);
    out.outer = out.inner = 1;
    for (int i = 0; i < a; ++i) out.outer *= dims.d[i];
    for (int i = a + 1; i < r; ++i) out.inner *= dims.d[i];
    out.n = dims.d[a];
    out.lines = out.outer * out.inner;
    out.ok = 1;
  }
  *g = out;
}

template <typename S>
using ScanAcc =
    std::conditional_t<std::is_floating_point_v<typename DNum<S>::C>, double, typename DNum<S>::C>;

template <bool kProd, typename A>
struct ScanOp {
  __device__ A operator()(A a, A b) const {
    return kProd ? static_cast<A>(a * b) : static_cast<A>(a + b);
  }
};

template <typename S, bool kProd>
__global__ void __launch_bounds__(kThreads)
    scanLinesKernel(const S* __restrict__ x, S* __restrict__ y, const ScanGeom* __restrict__ gp,
                    bool excl, bool rev) {
  using A = ScanAcc<S>;
  using C = typename DNum<S>::C;
  const ScanGeom g = *gp;
  if (!g.ok) return;
  const int64_t stride = int64_t(gridDim.x) * blockDim.x;
  for (int64_t l = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; l < g.lines; l += stride) {
    const int64_t o = l / g.inner, i = l - o * g.inner;
    A s = kProd ? A(1) : A(0);
    for (int64_t t = 0; t < g.n; ++t) {
      const int64_t j = rev ? g.n - 1 - t : t;
      const int64_t at = (o * g.n + j) * g.inner + i;
      const A v = static_cast<A>(DNum<S>::load(x[at]));
      if (!excl) s = ScanOp<kProd, A>{}(s, v);
      y[at] = DNum<S>::store(static_cast<C>(s));
      if (excl) s = ScanOp<kProd, A>{}(s, v);
    }
  }
}

constexpr int kScanThreads = 256, kScanItems = 4;

template <typename S, bool kProd>
__global__ void __launch_bounds__(kScanThreads)
    scanBlockKernel(const S* __restrict__ x, S* __restrict__ y, const ScanGeom* __restrict__ gp,
                    bool excl, bool rev) {
  using A = ScanAcc<S>;
  using C = typename DNum<S>::C;
  using Scan = cub::BlockScan<A, kScanThreads>;
  __shared__ typename Scan::TempStorage temp;
  __shared__ A carry_s;
  const ScanGeom g = *gp;
  if (!g.ok) return;
  const ScanOp<kProd, A> op{};
  const A identity = kProd ? A(1) : A(0);
  constexpr int64_t kChunk = int64_t(kScanThreads) * kScanItems;
  for (int64_t l = blockIdx.x; l < g.lines; l += gridDim.x) {
    const int64_t o = l / g.inner, i = l - o * g.inner;
    A carry = identity;
    for (int64_t c0 = 0; c0 < g.n; c0 += kChunk) {
      A items[kScanItems];
#pragma unroll
      for (int q = 0; q < kScanItems; ++q) {
        const int64_t t = c0 + int64_t(threadIdx.x) * kScanItems + q;
        const int64_t j = rev ? g.n - 1 - t : t;
        items[q] =
            t < g.n ? static_cast<A>(DNum<S>::load(x[(o * g.n + j) * g.inner + i])) : identity;
      }
      A scanned[kScanItems];
      A total;
      if (excl)
        Scan(temp).ExclusiveScan(items, scanned, identity, op, total);
      else
        Scan(temp).InclusiveScan(items, scanned, op, total);
#pragma unroll
      for (int q = 0; q < kScanItems; ++q) {
        const int64_t t = c0 + int64_t(threadIdx.x) * kScanItems + q;
        if (t >= g.n) continue;
        const int64_t j = rev ? g.n - 1 - t : t;
        y[(o * g.n + j) * g.inner + i] = DNum<S>::store(static_cast<C>(op(carry, scanned[q])));
      }
      if (threadIdx.x == 0) carry_s = op(carry, total);
      __syncthreads();
      carry = carry_s;
      __syncthreads();
    }
  }
}

inline size_t scanWorkspace(const AttrMap&, std::span<const TensorDesc>,
                            std::span<const TensorDesc>) {
  return sizeof(ScanGeom);
}

template <bool kProd, bool kBlock>
KernelFn scanFn(const char* name) {
  return
      [name](KernelContext& k, std::span<const Tensor> in, std::span<const Tensor> out) -> Status {
        const Tensor& x = in[0];
        const int r = x.desc.rank();
        if (r > kMaxDims)
          return Status::unsupported(std::string(name) + " (CUDA): rank above " +
                                     std::to_string(kMaxDims));
        if (x.numel() == 0) return Status::ok();
        cudaStream_t st = streamOf(k);
        ScanDims dims{};
        dims.rank = r;
        for (int a = 0; a < r; ++a) dims.d[a] = x.desc.dims[a];
        auto* g = static_cast<ScanGeom*>(k.workspace());
        scanGeomKernel<<<1, 1, 0, st>>>(in[1].data, in[1].desc.dtype == DataType::kInt64, dims, g,
                                        k.errorRecord());
        OPFORGE_RETURN_IF_ERROR(launched(name));
        const bool excl = k.attr<int64_t>("exclusive") != 0, rev = k.attr<int64_t>("reverse") != 0;
        return visitDevice<kNumeric>(x.desc.dtype, name, [&](auto tag) -> Status {
          using S = typename decltype(tag)::type;
          // Lines are at most numel (axis of size 1); the kernels read the real count.
          if constexpr (kBlock)
            scanBlockKernel<S, kProd>
                <<<static_cast<unsigned>(std::min<int64_t>(x.numel(), 132 * 16)), kScanThreads, 0,
                   st>>>(static_cast<const S*>(x.data), static_cast<S*>(out[0].data), g, excl, rev);
          else
            scanLinesKernel<S, kProd><<<blocksFor(x.numel()), kThreads, 0, st>>>(
                static_cast<const S*>(x.data), static_cast<S*>(out[0].data), g, excl, rev);
          return launched(name);
        });
      };
}

template <bool kProd>
auto scanTactics(const char* name) {
  return [=](OpDef& d) {
    d.tactic(1, "cuda.lines", scanFn<kProd, false>(name), linearOnly, scanWorkspace);
    d.tactic(2, "cuda.blockscan", scanFn<kProd, true>(name), linearOnly, scanWorkspace);
  };
}

}  // namespace opforge::ops
