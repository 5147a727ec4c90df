// CUDA tactic of ai.onnx::Slice. starts/ends/axes/steps live on the device (they are inputs since
// opset 10), so a one-thread kernel turns them into the base offset and per-axis strides (numpy
// clamping, as the reference) in the workspace, and the copy kernel reads those (in 16-byte units
// where the trailing axes the slice keeps whole are contiguous in X). Values that do not
// give the planned output shape are a run-time error (nothing is read out of bounds). The
// attribute form (opset < 10) is resolved on the host and copied in 16-byte units where possible.
#include "../common/kernel_axis.h"
#include "../common/movement.cuh"

namespace opforge::ops {
namespace {

struct SliceGeom {
  int rank;
  int64_t xd[kMaxDims];  // input dims
  int64_t xs[kMaxDims];  // input strides
  int64_t yd[kMaxDims];  // planned output dims
};

__device__ __forceinline__ void clampAxisDev(int64_t d, int64_t s, int64_t e, int64_t st,
                                             int64_t* start, int64_t* len) {
  if (s < 0) s += d;
  if (e < 0) e += d;
  if (st > 0) {
    s = s < 0 ? 0 : s > d ? d : s;
    e = e < 0 ? 0 : e > d ? d : e;
    *len = e > s ? (e - s + st - 1) / st : 0;
  } else {
    s = s < 0 ? 0 : s > d - 1 ? d - 1 : s;
    e = e < -1 ? -1 : e > d - 1 ? d - 1 : e;
    *len = s > e ? (s - e + (-st) - 1) / (-st) : 0;
  }
  *start = s;
}

// params[0] = base, params[1 + a] = stride of output axis a (elements).
__global__ void slicePrepKernel(const void* starts, const void* ends, const void* axes,
                                const void* steps, bool s64, bool e64, bool a64, bool st64, int n,
                                SliceGeom g, int64_t* params, DeviceErrorRecord* rec) {
  int64_t start[kMaxDims], step[kMaxDims], len[kMaxDims];
  for (int a = 0; a < g.rank; ++a) start[a] = 0, step[a] = 1, len[a] = g.xd[a];
  bool ok = true;
  for (int i = 0; i < n && ok; ++i) {
    int64_t ax = axes ? loadIndex(axes, a64, i) : i;
    if (ax < -g.rank || ax >= g.rank) {
      reportDeviceError(rec, kDeviceErrorValue, 3, ax, i, g.rank, 0);
      ok = false;
      break;
    }
    if (ax < 0) ax += g.rank;
    const int64_t st = steps ? loadIndex(steps, st64, i) : 1;
    if (st == 0) {
      reportDeviceError(rec, kDeviceErrorValue, 4, 0, i, 0, 0);
      ok = false;
      break;
    }
    clampAxisDev(g.xd[ax], loadIndex(starts, s64, i), loadIndex(ends, e64, i), st, &start[ax],
                 &len[ax]);
    step[ax] = st;
  }
  for (int a = 0; a < g.rank && ok; ++a)
    if (len[a] != g.yd[a]) {
      reportDeviceError(rec, kDeviceErrorSize, 1, len[a], a, g.yd[a], a);
      ok = false;
    }
  int64_t base = 0;
  for (int a = 0; a < g.rank; ++a) {
    base += ok ? start[a] * g.xs[a] : 0;
    params[1 + a] = ok ? step[a] * g.xs[a] : 0;
  }
  params[0] = base;
}

// X's offset of output index `rem` over output axes [0, axes): base plus each coordinate times its
// stride in params.
__device__ __forceinline__ int64_t sliceOffset(const SliceGeom& g, const int64_t* params,
                                               int64_t rem, int64_t base, int axes) {
  for (int a = axes - 1; a >= 0; --a) {
    const int64_t q = rem / g.yd[a];
    base += (rem - q * g.yd[a]) * params[1 + a];
    rem = q;
  }
  return base;
}

// One element a thread.
template <typename S>
__device__ __forceinline__ void sliceElements(const S* __restrict__ x, S* __restrict__ y,
                                              const SliceGeom& g, const int64_t* params,
                                              int64_t n) {
  const int64_t stride = int64_t(gridDim.x) * blockDim.x;
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride)
    y[i] = x[sliceOffset(g, params, i, params[0], g.rank)];
}

template <typename S>
__global__ void __launch_bounds__(kThreads)
    sliceKernel(const S* __restrict__ x, S* __restrict__ y, SliceGeom g,
                const int64_t* __restrict__ params, int64_t n) {
  sliceElements(x, y, g, params, n);
}

// The same in 16-byte units: the trailing `tail` axes, which the planned shape keeps whole, hold
// `run` elements (a multiple of 16 bytes) that are contiguous in X when the steps (device values)
// leave them so and the base offset is 16-byte aligned; the kernel checks that and otherwise copies
// element by element. (Swin's patch merging: every other row, then every other column, of
// [N, H, W, C] rows of C channels.)
template <typename S>
__global__ void __launch_bounds__(kThreads)
    sliceVecKernel(const S* __restrict__ x, S* __restrict__ y, SliceGeom g, int tail, int64_t run,
                   const int64_t* __restrict__ params, int64_t n) {
  constexpr int V = 16 / sizeof(S);
  const int64_t stride = int64_t(gridDim.x) * blockDim.x;
  const int64_t base = params[0];
  bool contiguous = base % V == 0;
  for (int a = g.rank - tail; a < g.rank; ++a) contiguous = contiguous && params[1 + a] == g.xs[a];
  if (!contiguous) {
    sliceElements(x, y, g, params, n);
    return;
  }
  const int64_t vecs = n / V;
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < vecs; i += stride) {
    const int64_t e = i * V, outer = e / run;
    const int64_t off = sliceOffset(g, params, outer, base + (e - outer * run), g.rank - tail);
    reinterpret_cast<uint4*>(y)[i] = *reinterpret_cast<const uint4*>(x + off);
  }
}

size_t sliceWorkspace(const AttrMap&, std::span<const TensorDesc> in, std::span<const TensorDesc>) {
  return sizeof(int64_t) * (1 + kMaxDims);
}

Status sliceCuda(KernelContext& k, std::span<const Tensor> in, std::span<const Tensor> out) {
  const Tensor &x = in[0], &y = out[0];
  const int r = x.desc.rank();
  const size_t es = dtypeSize(x.desc.dtype);
  if (y.numel() == 0) return Status::ok();
  const auto xs = stridesOf(x.desc.dims);
  if (!hasIn(in, 1)) {  // opset < 10: attributes, resolved here
    const auto starts = k.attr<std::vector<int64_t>>("starts"),
               ends = k.attr<std::vector<int64_t>>("ends");
    std::vector<int64_t> axes;
    if (k.attrs().has("axes")) axes = k.attr<std::vector<int64_t>>("axes");
    if (axes.empty())
      for (size_t i = 0; i < starts.size(); ++i) axes.push_back(static_cast<int64_t>(i));
    std::vector<int64_t> start(r, 0), dims = x.desc.dims;
    if (axes.size() != starts.size() || ends.size() != starts.size())
      return Status::invalid("attributes 'starts', 'ends' and 'axes' differ in length");
    for (size_t i = 0; i < starts.size(); ++i) {
      OPFORGE_ASSIGN_OR_RETURN(const int a, kernelAxis(axes[i], r, "axes"));
      int64_t s = starts[i], e = ends[i], d = x.desc.dims[a];
      if (s < 0) s += d;
      if (e < 0) e += d;
      s = std::clamp<int64_t>(s, 0, d);
      e = std::clamp<int64_t>(e, 0, d);
      start[a] = s;
      dims[a] = e > s ? e - s : 0;
    }
    if (dims != y.desc.dims)
      return Status::invalid("the slice of " + dimsToString(x.desc.dims) + " has shape " +
                             dimsToString(dims) + ", not the planned " + dimsToString(y.desc.dims));
    int64_t base = 0;
    for (int a = 0; a < r; ++a) base += start[a] * xs[a];
    return launchStridedCopy(x.data, y.data, es, y.desc.dims, xs, base, streamOf(k), "Slice");
  }
  if (r > kMaxDims)
    return Status::unsupported("Slice (CUDA): rank above " + std::to_string(kMaxDims));
  SliceGeom g{};
  g.rank = r;
  for (int a = 0; a < r; ++a) g.xd[a] = x.desc.dims[a], g.xs[a] = xs[a], g.yd[a] = y.desc.dims[a];
  auto* params = static_cast<int64_t*>(k.workspace());
  auto is64 = [&](size_t i) { return hasIn(in, i) && in[i].desc.dtype == DataType::kInt64; };
  const int n = static_cast<int>(in[1].numel());
  if (in[2].numel() != n || (hasIn(in, 3) && in[3].numel() != n) ||
      (hasIn(in, 4) && in[4].numel() != n))
    return Status::invalid("Slice: starts, ends, axes and steps must have one length");
  cudaStream_t st = streamOf(k);
  slicePrepKernel<<<1, 1, 0, st>>>(in[1].data, in[2].data, hasIn(in, 3) ? in[3].data : nullptr,
                                   hasIn(in, 4) ? in[4].data : nullptr, is64(1), is64(2), is64(3),
                                   is64(4), n, g, params, k.errorRecord());
  OPFORGE_RETURN_IF_ERROR(launched("Slice"));
  // The trailing axes the slice keeps whole, and the elements they hold.
  int tail = 0;
  int64_t run = 1;
  while (tail < r && g.yd[r - 1 - tail] == g.xd[r - 1 - tail]) run *= g.yd[r - 1 - tail++];
  const bool vec = tail > 0 && run > 0 && (run * static_cast<int64_t>(es)) % 16 == 0 &&
                   aligned16(x.data) && aligned16(y.data);
  return visitDeviceBySize(x.desc.dtype, "Slice", [&](auto tag) -> Status {
    using S = typename decltype(tag)::type;
    if (vec) {
      const int64_t vecs = y.numel() / (16 / static_cast<int64_t>(sizeof(S)));
      sliceVecKernel<S><<<blocksFor(vecs), kThreads, 0, st>>>(
          static_cast<const S*>(x.data), static_cast<S*>(y.data), g, tail, run, params, y.numel());
      return launched("Slice");
    }
    sliceKernel<S><<<blocksFor(y.numel()), kThreads, 0, st>>>(
        static_cast<const S*>(x.data), static_cast<S*>(y.data), g, params, y.numel());
    return launched("Slice");
  });
}

bool sliceApplies(const AttrMap& a, std::span<const TensorDesc> in,
                  std::span<const TensorDesc> out) {
  return linearOnly(a, in, out) && in[0].rank() <= kMaxDims;
}
}  // namespace

OPFORGE_TACTICS("ai.onnx::Slice", [](OpDef& d) {
  d.tactic(1, "cuda.strided", sliceCuda, sliceApplies, sliceWorkspace);
});

}  // namespace opforge::ops
