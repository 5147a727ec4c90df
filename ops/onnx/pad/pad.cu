// CUDA tactic of ai.onnx::Pad (constant, reflect, edge, wrap; negative pads crop). The pads and
// axes are inputs on the device (opset 11+): a one-thread kernel turns them into the begin pad of
// every axis (in the workspace), and each output element maps to its source element or the fill
// value (constant_value input, `value` attribute, or 0). The attribute form (what the graph pass
// pad_constant_params makes of known pads) is resolved on the host: the block behind the last
// padded axis moves in units of up to 16 bytes (a [N, H, W, C] tensor padded on H and W copies C
// in 16-byte units), with 32-bit index arithmetic where the tensor allows.
#include "../common/cuda_common.cuh"

namespace opforge::ops {

Status padTypes(std::span<const Tensor> in, std::span<const Tensor> out);  // pad.cc

namespace {
struct PadGeom {
  int rank, mode;  // 0 constant, 1 reflect, 2 edge, 3 wrap
  int64_t xd[kMaxDims], xs[kMaxDims], yd[kMaxDims], begin[kMaxDims];
};

__device__ __forceinline__ int64_t padSource(int64_t q, int64_t d, int mode) {
  if (q >= 0 && q < d) return q;
  if (d <= 0) return -1;
  switch (mode) {
    case 1: {  // reflect
      if (d == 1) return 0;
      const int64_t period = 2 * (d - 1);
      int64_t m = q % period;
      if (m < 0) m += period;
      return m < d ? m : period - m;
    }
    case 2:
      return q < 0 ? 0 : d - 1;  // edge
    case 3: {                    // wrap
      int64_t m = q % d;
      return m < 0 ? m + d : m;
    }
    default:
      return -1;
  }
}

// begin[a] from pads (2 * n values) and axes (n values, or all axes when absent).
__global__ void padPrepKernel(const void* pads, bool p64, const void* axes, bool a64, int n,
                              int rank, int64_t* begin, DeviceErrorRecord* rec) {
  for (int a = 0; a < rank; ++a) begin[a] = 0;
  for (int i = 0; i < n; ++i) {
    int64_t ax = axes ? loadIndex(axes, a64, i) : i;
    if (ax < -rank || ax >= rank) {
      reportDeviceError(rec, kDeviceErrorValue, 3, ax, i, rank, 0);
      return;
    }
    if (ax < 0) ax += rank;
    begin[ax] = loadIndex(pads, p64, i);
  }
}

template <typename U, typename I>
__global__ void __launch_bounds__(kThreads)
    padKernel(const U* __restrict__ x, U* __restrict__ y, PadGeom g,
              const int64_t* __restrict__ begin_dev, const U* __restrict__ fill_dev, U fill, I n) {
  const U v = fill_dev ? *fill_dev : fill;
  const I stride = I(gridDim.x) * blockDim.x;
  for (I i = I(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) {
    I rem = i;
    int64_t off = 0;
    bool constant = false;
    for (int a = g.rank - 1; a >= 0; --a) {
      const I d = static_cast<I>(g.yd[a]), q = rem / d, c = rem - q * d;
      rem = q;
      const int64_t b = begin_dev ? begin_dev[a] : g.begin[a];
      const int64_t s = padSource(static_cast<int64_t>(c) - b, g.xd[a], g.mode);
      if (s < 0) constant = true;
      off += s * g.xs[a];
    }
    y[i] = constant ? v : x[off];
  }
}

// The unit-wide fill: the fill element's bytes repeated.
template <typename U>
__device__ __forceinline__ U splat(const uint8_t* e, int es) {
  U u;
  auto* p = reinterpret_cast<uint8_t*>(&u);
  for (int k = 0; k < static_cast<int>(sizeof(U)); ++k) p[k] = e[k % es];
  return u;
}

// Pads known on the host, the block behind the last padded axis unpadded: each thread copies a
// unit (up to 16 bytes) of a block, from the source block of its outer coordinates or the fill.
// g's axes are the outer ones; xs counts blocks.
template <typename U, typename I>
__global__ void __launch_bounds__(kThreads)
    padBlocksKernel(const U* __restrict__ x, U* __restrict__ y, PadGeom g, I units,
                    const uint8_t* __restrict__ fill_dev, int es, U fill, I n) {
  const U v = fill_dev ? splat<U>(fill_dev, es) : fill;
  const I stride = I(gridDim.x) * blockDim.x;
  for (I i = I(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) {
    I row = i / units;
    const I u = i - row * units;
    int64_t off = 0;
    bool constant = false;
    for (int a = g.rank - 1; a >= 0; --a) {
      const I d = static_cast<I>(g.yd[a]), q = row / d, c = row - q * d;
      row = q;
      const int64_t s = padSource(static_cast<int64_t>(c) - g.begin[a], g.xd[a], g.mode);
      if (s < 0) constant = true;
      off += s * g.xs[a];
    }
    y[i] = constant ? v : x[off * static_cast<int64_t>(units) + u];
  }
}

template <typename U>
Status launchBlocks(const Tensor& x, const Tensor& y, const PadGeom& g, int64_t units,
                    const void* fill_dev, const uint8_t* fill, size_t es, cudaStream_t st) {
  U f;
  uint8_t bytes[sizeof(U)];
  for (size_t k = 0; k < sizeof(U); ++k) bytes[k] = fill[k % es];
  std::memcpy(&f, bytes, sizeof(U));
  const int64_t n = static_cast<int64_t>(y.bytes() / sizeof(U));
  const auto* fd = static_cast<const uint8_t*>(fill_dev);
  if (n < (int64_t{1} << 31))
    padBlocksKernel<U, uint32_t><<<blocksFor(n), kThreads, 0, st>>>(
        static_cast<const U*>(x.data), static_cast<U*>(y.data), g, static_cast<uint32_t>(units), fd,
        static_cast<int>(es), f, static_cast<uint32_t>(n));
  else
    padBlocksKernel<U, uint64_t><<<blocksFor(n), kThreads, 0, st>>>(
        static_cast<const U*>(x.data), static_cast<U*>(y.data), g, static_cast<uint64_t>(units), fd,
        static_cast<int>(es), f, static_cast<uint64_t>(n));
  return launched("Pad");
}

// The block path (pads in the attribute form): axes merged from the end while unpadded, the
// block in the widest unit its bytes and both pointers allow (one element where the last axis is
// padded).
Status padBlocks(const Tensor& x, const Tensor& y, const PadGeom& full, const void* fill_dev,
                 const uint8_t* fill, cudaStream_t st) {
  const int r = full.rank;
  const size_t es = dtypeSize(x.desc.dtype);
  int last = r - 1;  // the last padded axis
  int64_t block = 1;
  while (last >= 0 && full.begin[last] == 0 && full.xd[last] == full.yd[last]) {
    block *= full.xd[last];
    --last;
  }
  const int64_t block_bytes = block * static_cast<int64_t>(es);
  size_t unit = 16;
  while (unit > es && (block_bytes % static_cast<int64_t>(unit) != 0 ||
                       reinterpret_cast<uintptr_t>(x.data) % unit != 0 ||
                       reinterpret_cast<uintptr_t>(y.data) % unit != 0))
    unit /= 2;
  if (unit < es) unit = es;
  PadGeom g{};
  g.rank = last + 1;
  g.mode = full.mode;
  int64_t rows = 1;
  for (int a = last; a >= 0; --a) {
    g.xd[a] = full.xd[a], g.yd[a] = full.yd[a], g.begin[a] = full.begin[a];
    g.xs[a] = rows;  // in blocks
    rows *= full.xd[a];
  }
  const int64_t units = block_bytes / static_cast<int64_t>(unit);
  switch (unit) {
    case 16:
      return launchBlocks<uint4>(x, y, g, units, fill_dev, fill, es, st);
    case 8:
      return launchBlocks<uint2>(x, y, g, units, fill_dev, fill, es, st);
    case 4:
      return launchBlocks<uint32_t>(x, y, g, units, fill_dev, fill, es, st);
    case 2:
      return launchBlocks<uint16_t>(x, y, g, units, fill_dev, fill, es, st);
    default:
      return launchBlocks<uint8_t>(x, y, g, units, fill_dev, fill, es, st);
  }
}

int padMode(const std::string& m) {
  return m == "reflect" ? 1 : m == "edge" ? 2 : m == "wrap" ? 3 : 0;
}

Status padCuda(KernelContext& k, std::span<const Tensor> in, std::span<const Tensor> out) {
  const Tensor &x = in[0], &y = out[0];
  OPFORGE_RETURN_IF_ERROR(padTypes(in, out));
  const int r = x.desc.rank();
  if (r > kMaxDims)
    return Status::unsupported("Pad (CUDA): rank above " + std::to_string(kMaxDims));
  if (y.numel() == 0) return Status::ok();
  PadGeom g{};
  g.rank = r;
  g.mode = padMode(k.attr<std::string>("mode"));
  const auto xs = stridesOf(x.desc.dims);
  for (int a = 0; a < r; ++a) g.xd[a] = x.desc.dims[a], g.xs[a] = xs[a], g.yd[a] = y.desc.dims[a];
  cudaStream_t st = streamOf(k);
  const int64_t* begin_dev = nullptr;
  if (hasIn(in, 1)) {
    const int64_t naxes = hasIn(in, 3) ? in[3].numel() : r;
    if (in[1].numel() != 2 * naxes)
      return Status::invalid("pads has " + std::to_string(in[1].numel()) + " values; " +
                             std::to_string(2 * naxes) + " expected (two per padded axis)");
    auto* b = static_cast<int64_t*>(k.workspace());
    padPrepKernel<<<1, 1, 0, st>>>(in[1].data, in[1].desc.dtype == DataType::kInt64,
                                   hasIn(in, 3) ? in[3].data : nullptr,
                                   hasIn(in, 3) && in[3].desc.dtype == DataType::kInt64,
                                   static_cast<int>(naxes), r, b, k.errorRecord());
    OPFORGE_RETURN_IF_ERROR(launched("Pad"));
    begin_dev = b;
  } else {
    const auto pads = k.attr<std::vector<int64_t>>("pads");
    if (static_cast<int>(pads.size()) != 2 * r)
      return Status::invalid("pads has " + std::to_string(pads.size()) + " values; " +
                             std::to_string(2 * r) + " expected");
    for (int a = 0; a < r; ++a) g.begin[a] = pads[a];
  }
  uint8_t fill[8] = {0};
  const void* fill_dev = nullptr;
  if (hasIn(in, 2) && in[2].numel() >= 1)
    fill_dev = in[2].data;
  else if (k.attrs().has("value"))
    storeFromDouble(fill, x.desc.dtype, 0, k.attr<double>("value"));
  if (!begin_dev) return padBlocks(x, y, g, fill_dev, fill, st);
  const bool narrow = y.numel() < (int64_t{1} << 31);  // source offsets are 64-bit anyway
  return visitDeviceBySize(x.desc.dtype, "Pad", [&](auto tag) -> Status {
    using U = typename decltype(tag)::type;
    U f;
    std::memcpy(&f, fill, sizeof(U));
    const auto* px = static_cast<const U*>(x.data);
    auto* py = static_cast<U*>(y.data);
    const auto* fd = static_cast<const U*>(fill_dev);
    if (narrow)
      padKernel<U, uint32_t><<<blocksFor(y.numel()), kThreads, 0, st>>>(
          px, py, g, begin_dev, fd, f, static_cast<uint32_t>(y.numel()));
    else
      padKernel<U, uint64_t><<<blocksFor(y.numel()), kThreads, 0, st>>>(
          px, py, g, begin_dev, fd, f, static_cast<uint64_t>(y.numel()));
    return launched("Pad");
  });
}
}  // namespace

OPFORGE_TACTICS("ai.onnx::Pad", [](OpDef& d) {
  d.tactic(
      1, "cuda.gather", padCuda,
      [](const AttrMap& a, std::span<const TensorDesc> in, std::span<const TensorDesc> out) {
        return linearOnly(a, in, out) && in[0].rank() <= kMaxDims;
      },
      [](const AttrMap&, std::span<const TensorDesc>, std::span<const TensorDesc>) -> size_t {
        return sizeof(int64_t) * kMaxDims;
      });
});

}  // namespace opforge::ops
