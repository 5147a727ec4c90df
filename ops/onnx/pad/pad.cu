// CUDA tactic of ai.onnx::Pad (constant, reflect, edge, wrap; negative pads crop). The pads and
// axes are inputs on the device (opset 11+): a one-thread kernel turns them into the begin pad of
// every axis (in the workspace); the attribute form is resolved on the host. Each output element
// maps to its source element, or the fill value (constant_value input, `value` attribute, or 0).
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

template <typename U>
__global__ void __launch_bounds__(kThreads)
    padKernel(const U* __restrict__ x, U* __restrict__ y, PadGeom g,
              const int64_t* __restrict__ begin_dev, const U* __restrict__ fill_dev, U fill,
              int64_t n) {
  const U v = fill_dev ? *fill_dev : fill;
  const int64_t stride = int64_t(gridDim.x) * blockDim.x;
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) {
    int64_t rem = i, off = 0;
    bool constant = false;
    for (int a = g.rank - 1; a >= 0; --a) {
      const int64_t q = rem / g.yd[a], c = rem - q * g.yd[a];
      rem = q;
      const int64_t b = begin_dev ? begin_dev[a] : g.begin[a];
      const int64_t s = padSource(c - b, g.xd[a], g.mode);
      if (s < 0) constant = true;
      off += s * g.xs[a];
    }
    y[i] = constant ? v : x[off];
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
  return visitDeviceBySize(x.desc.dtype, "Pad", [&](auto tag) -> Status {
    using U = typename decltype(tag)::type;
    U f;
    std::memcpy(&f, fill, sizeof(U));
    padKernel<U><<<blocksFor(y.numel()), kThreads, 0, st>>>(
        static_cast<const U*>(x.data), static_cast<U*>(y.data), g, begin_dev,
        static_cast<const U*>(fill_dev), f, y.numel());
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
