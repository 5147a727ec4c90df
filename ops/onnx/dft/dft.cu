// CUDA tactics of ai.onnx::DFT:
//   1 cuda.direct  the direct O(n L) sum per output element (common/dft.h, in double, each twiddle
//                  from the exact residue k t mod n), a thread per output element: only for short
//                  transforms (it applies to axes up to 4096, n up to 8192), every float type. The
//                  axis (opset 20) and dft_length inputs live on the device: a one-thread kernel
//                  turns them into the line geometry in the workspace (a value that differs from
//                  the build-time one is reported through the device error record, the output
//                  zeroed).
//   2 cuda.cufft   FP32 / FP64, any length: the lines are packed into complex rows of n in the
//                  workspace (zero-padded or truncated; irfft: the full Hermitian spectrum), one
//                  batched cuFFT C2C / Z2Z transform in place, then unpacked (1/n for the inverse).
//                  It needs the axis and n on the host: opsets 17-19 (the attribute) or no axis
//                  input, and no dft_length on a one-sided forward transform (where the output
//                  does not tell n). Plans are cached per thread and device (made outside any
//                  graph capture's restrictions, as the cuBLASLt handles); their work area is the
//                  tactic's workspace.
#include <cufft.h>

#include <map>
#include <tuple>

#include "../common/cuda_common.cuh"
#include "../common/dft.h"

namespace opforge::ops {
namespace {

constexpr int64_t kMaxDirect = 8192;

struct DftDims {
  int rank;
  int64_t dims[kMaxDims];
};

__global__ void dftGeomKernel(DftDims d, int64_t attr_axis, const void* axis, bool axis64,
                              const void* len, bool len64, bool inverse, bool onesided,
                              int64_t out_numel, int out_c, DftLine* out, DeviceErrorRecord* rec) {
  const int64_t a = axis ? loadIndex(axis, axis64, 0) : attr_axis;
  const int64_t n = len ? loadIndex(len, len64, 0) : 0;
  DftLine g;
  const bool ok = dftLineFrom(d.dims, d.rank, a, len != nullptr, n, inverse, onesided, g);
  if (!ok || g.outer * g.out_len * g.inner * g.out_c != out_numel ||
      (g.n > kMaxDirect || g.L > kMaxDirect)) {
    reportDeviceError(rec, kDeviceErrorValue, len ? 1 : 2, len ? n : a, 0, d.rank, 0);
    g.outer = 0;  // nothing is summed; the output (as the plan shaped it) is zeroed
    g.out_len = 1, g.inner = 1, g.out_c = out_c;
  }
  *out = g;
}

template <typename S>
__global__ void dftKernel(const S* __restrict__ x, S* __restrict__ y, const DftLine* line,
                          int64_t total) {
  const DftLine g = *line;
  const int64_t stride = int64_t(gridDim.x) * blockDim.x;
  for (int64_t e = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; e < total; e += stride) {
    double re = 0, im = 0;
    const int64_t i = e % g.inner, k = (e / g.inner) % g.out_len, o = e / (g.inner * g.out_len);
    if (o < g.outer)
      dftElement(
          g, o, k, i, [&](int64_t j) { return static_cast<double>(DNum<S>::load(x[j])); }, re, im);
    using C = typename DNum<S>::C;
    y[e * g.out_c] = DNum<S>::store(static_cast<C>(re));
    if (g.out_c == 2) y[e * 2 + 1] = DNum<S>::store(static_cast<C>(im));
  }
}

Status dftDirect(KernelContext& k, std::span<const Tensor> in, std::span<const Tensor> out) {
  const auto& xd = in[0].desc.dims;
  const auto& yd = out[0].desc.dims;
  if (static_cast<int>(xd.size()) > kMaxDims)
    return Status::unsupported("DFT (CUDA): rank above 10");
  DftDims d{};
  d.rank = static_cast<int>(xd.size());
  for (int a = 0; a < d.rank; ++a) d.dims[a] = xd[a];
  const bool opset20 = opsetOf(k.attrs()) >= 20;
  const void* axis = opset20 && hasIn(in, 2) ? in[2].data : nullptr;
  const int64_t attr_axis = opset20 ? -2 : k.attr<int64_t>("axis");
  DftLine* line = static_cast<DftLine*>(k.workspace());
  cudaStream_t st = streamOf(k);
  const bool inverse = k.attr<int64_t>("inverse") != 0, onesided = k.attr<int64_t>("onesided") != 0;
  dftGeomKernel<<<1, 1, 0, st>>>(
      d, attr_axis, axis, axis && in[2].desc.dtype == DataType::kInt64,
      hasIn(in, 1) ? in[1].data : nullptr, hasIn(in, 1) && in[1].desc.dtype == DataType::kInt64,
      inverse, onesided, out[0].numel(), static_cast<int>(yd.back()), line, k.errorRecord());
  OPFORGE_RETURN_IF_ERROR(launched("DFT (geometry)"));
  const int64_t total = out[0].numel() / yd.back();  // output elements (complex or real)
  if (total == 0) return Status::ok();
  return visitDevice<kFloats>(in[0].desc.dtype, "DFT", [&](auto tag) -> Status {
    using S = typename decltype(tag)::type;
    dftKernel<S><<<blocksFor(total), kThreads, 0, st>>>(static_cast<const S*>(in[0].data),
                                                        static_cast<S*>(out[0].data), line, total);
    return launched("DFT");
  });
}
// The transform lengths (the build-time values) on the host, for applies().
bool directApplies(const AttrMap&, std::span<const TensorDesc> in,
                   std::span<const TensorDesc> out) {
  if (!allLinear(in, out) || in[0].rank() > kMaxDims) return false;
  for (size_t a = 0; a + 1 < in[0].dims.size(); ++a)
    if (in[0].dims[a] > kMaxDirect / 2 || out[0].dims[a] > kMaxDirect / 2) return false;
  return true;
}
size_t directWorkspace(const AttrMap&, std::span<const TensorDesc>, std::span<const TensorDesc>) {
  return 256;
}
// ---- cuFFT ---------------------------------------------------------------------------------

// The line geometry on the host, when the attributes and shapes tell it (see the header).
bool hostLine(const AttrMap& a, std::span<const TensorDesc> in, std::span<const TensorDesc> out,
              DftLine& g) {
  const bool opset20 = opsetOf(a) >= 20;
  if (opset20 && present(in, 2)) return false;  // the axis is a device value
  const int64_t axis = opset20 ? -2 : a.get<int64_t>("axis");
  const bool inverse = a.get<int64_t>("inverse") != 0, onesided = a.get<int64_t>("onesided") != 0;
  const auto& xd = in[0].dims;
  const int rank = static_cast<int>(xd.size());
  const bool has_n = present(in, 1);
  if (has_n && onesided && !inverse) return false;  // n is 2 (bins - 1) or 2 bins - 1
  const int64_t ax = axis < 0 ? axis + rank : axis;
  if (ax < 0 || ax >= rank - 1) return false;
  const int64_t n = has_n ? out[0].dims[ax] : 0;
  return dftLineFrom(xd.data(), rank, axis, has_n, n, inverse, onesided, g);
}

Status fftStatus(cufftResult r, const char* what) {
  if (r == CUFFT_SUCCESS) return Status::ok();
  return Status::runtime(std::string("cuFFT ") + what + " failed (cufftResult " +
                         std::to_string(static_cast<int>(r)) + ")");
}

struct FftPlans {
  // (device, n, batch, double) -> plan and its work-area size
  std::map<std::tuple<int, int64_t, int64_t, bool>, std::pair<cufftHandle, size_t>> plans;
  ~FftPlans() {
    for (auto& [key, p] : plans) (void)cufftDestroy(p.first);
  }
};

// The work-area size of a plan for (n, batch), without keeping a plan.
Result<size_t> fftWorkSize(int64_t n, int64_t batch, bool dbl) {
  cufftHandle h;
  OPFORGE_RETURN_IF_ERROR(fftStatus(cufftCreate(&h), "create"));
  long long nn = n;
  size_t ws = 0;
  const cufftResult r = cufftGetSizeMany64(h, 1, &nn, nullptr, 1, nn, nullptr, 1, nn,
                                           dbl ? CUFFT_Z2Z : CUFFT_C2C, batch, &ws);
  (void)cufftDestroy(h);
  OPFORGE_RETURN_IF_ERROR(fftStatus(r, "size"));
  return ws;
}

Result<std::pair<cufftHandle, size_t>> fftPlan(int64_t n, int64_t batch, bool dbl) {
  thread_local FftPlans cache;
  int dev = 0;
  OPFORGE_RETURN_IF_ERROR(cudaStatus(cudaGetDevice(&dev), "cudaGetDevice"));
  const auto key = std::make_tuple(dev, n, batch, dbl);
  auto it = cache.plans.find(key);
  if (it != cache.plans.end()) return it->second;
  // Making a plan may allocate (twiddle tables); allow it even while this thread captures.
  cudaStreamCaptureMode mode = cudaStreamCaptureModeRelaxed;
  (void)cudaThreadExchangeStreamCaptureMode(&mode);
  cufftHandle h;
  cufftResult r = cufftCreate(&h);
  size_t ws = 0;
  if (r == CUFFT_SUCCESS) {
    r = cufftSetAutoAllocation(h, 0);
    long long nn = n;
    if (r == CUFFT_SUCCESS)
      r = cufftMakePlanMany64(h, 1, &nn, nullptr, 1, nn, nullptr, 1, nn,
                              dbl ? CUFFT_Z2Z : CUFFT_C2C, batch, &ws);
    if (r != CUFFT_SUCCESS) (void)cufftDestroy(h);
  }
  (void)cudaThreadExchangeStreamCaptureMode(&mode);
  OPFORGE_RETURN_IF_ERROR(fftStatus(r, "plan"));
  cache.plans[key] = {h, ws};
  return std::make_pair(h, ws);
}

// Lines of X -> complex rows of n (T2: float2 / double2).
template <typename S, typename T2>
__global__ void fftPackKernel(const S* __restrict__ x, T2* __restrict__ buf, DftLine g) {
  const int64_t total = g.outer * g.inner * g.n, stride = int64_t(gridDim.x) * blockDim.x;
  using R = decltype(T2{}.x);
  for (int64_t e = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; e < total; e += stride) {
    const int64_t m = e % g.n, line = e / g.n, i = line % g.inner, o = line / g.inner;
    auto at = [&](int64_t t, int part) { return ((o * g.L + t) * g.inner + i) * g.in_c + part; };
    R re = 0, im = 0;
    if (g.inverse && g.onesided) {
      const int64_t src = m <= g.n / 2 ? m : g.n - m;
      if (src < g.L) {
        re = static_cast<R>(DNum<S>::load(x[at(src, 0)]));
        im = g.in_c == 2 ? static_cast<R>(DNum<S>::load(x[at(src, 1)])) : R(0);
        if (src == 0 || (g.n % 2 == 0 && src == g.n / 2)) im = 0;
        if (m > g.n / 2) im = -im;
      }
    } else if (m < g.L) {
      re = static_cast<R>(DNum<S>::load(x[at(m, 0)]));
      im = g.in_c == 2 ? static_cast<R>(DNum<S>::load(x[at(m, 1)])) : R(0);
    }
    buf[e] = T2{re, im};
  }
}

template <typename S, typename T2>
__global__ void fftUnpackKernel(const T2* __restrict__ buf, S* __restrict__ y, DftLine g) {
  const int64_t total = g.outer * g.out_len * g.inner, stride = int64_t(gridDim.x) * blockDim.x;
  using R = decltype(T2{}.x);
  using C = typename DNum<S>::C;
  const R scale = g.inverse ? R(1) / static_cast<R>(g.n) : R(1);
  for (int64_t e = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; e < total; e += stride) {
    const int64_t i = e % g.inner, k = (e / g.inner) % g.out_len, o = e / (g.inner * g.out_len);
    const T2 v = buf[(o * g.inner + i) * g.n + k];
    y[e * g.out_c] = DNum<S>::store(static_cast<C>(v.x * scale));
    if (g.out_c == 2) y[e * 2 + 1] = DNum<S>::store(static_cast<C>(v.y * scale));
  }
}

size_t fftBufBytes(const DftLine& g, bool dbl) {
  return (static_cast<size_t>(g.outer * g.inner * g.n) * (dbl ? 16 : 8) + 255) / 256 * 256;
}

Status dftCufft(KernelContext& k, std::span<const Tensor> in, std::span<const Tensor> out) {
  std::vector<TensorDesc> ind{in[0].desc}, outd{out[0].desc};
  for (size_t i = 1; i < in.size(); ++i) ind.push_back(in[i].desc);
  DftLine g;
  if (!hostLine(k.attrs(), ind, outd, g)) return Status::unsupported("DFT (cuFFT): geometry");
  if (out[0].numel() == 0) return Status::ok();
  const bool dbl = in[0].desc.dtype == DataType::kFloat64;
  const int64_t batch = g.outer * g.inner;
  OPFORGE_ASSIGN_OR_RETURN(auto plan, fftPlan(g.n, batch, dbl));
  const size_t buf_bytes = fftBufBytes(g, dbl);
  if (buf_bytes + plan.second > k.workspaceSize())
    return Status::runtime("DFT (cuFFT): the plan needs " + std::to_string(plan.second) +
                           " bytes of work area; the workspace has " +
                           std::to_string(k.workspaceSize() - buf_bytes));
  uint8_t* ws = static_cast<uint8_t*>(k.workspace());
  cudaStream_t st = streamOf(k);
  OPFORGE_RETURN_IF_ERROR(fftStatus(cufftSetStream(plan.first, st), "set stream"));
  OPFORGE_RETURN_IF_ERROR(fftStatus(cufftSetWorkArea(plan.first, ws + buf_bytes), "work area"));
  const int dir = g.inverse ? CUFFT_INVERSE : CUFFT_FORWARD;
  auto run = [&](auto stag, auto ctag) -> Status {
    using S = typename decltype(stag)::type;
    using T2 = typename decltype(ctag)::type;
    T2* buf = reinterpret_cast<T2*>(ws);
    fftPackKernel<S, T2>
        <<<blocksFor(batch * g.n), kThreads, 0, st>>>(static_cast<const S*>(in[0].data), buf, g);
    OPFORGE_RETURN_IF_ERROR(launched("DFT (cuFFT pack)"));
    if constexpr (std::is_same_v<T2, double2>)
      OPFORGE_RETURN_IF_ERROR(fftStatus(cufftExecZ2Z(plan.first, buf, buf, dir), "exec"));
    else
      OPFORGE_RETURN_IF_ERROR(fftStatus(cufftExecC2C(plan.first, buf, buf, dir), "exec"));
    fftUnpackKernel<S, T2><<<blocksFor(g.outer * g.out_len * g.inner), kThreads, 0, st>>>(
        buf, static_cast<S*>(out[0].data), g);
    return launched("DFT (cuFFT unpack)");
  };
  if (dbl) return run(TypeTag<double>{}, TypeTag<double2>{});
  return run(TypeTag<float>{}, TypeTag<float2>{});
}

bool cufftApplies(const AttrMap& a, std::span<const TensorDesc> in,
                  std::span<const TensorDesc> out) {
  const DataType t = in[0].dtype;
  DftLine g;
  return (t == DataType::kFloat32 || t == DataType::kFloat64) && allLinear(in, out) &&
         hostLine(a, in, out, g) && g.n <= (int64_t{1} << 27) &&
         g.outer * g.inner * g.n <= (int64_t{1} << 31);
}

size_t cufftWorkspace(const AttrMap& a, std::span<const TensorDesc> in,
                      std::span<const TensorDesc> out) {
  DftLine g;
  if (!hostLine(a, in, out, g)) return 0;
  const bool dbl = in[0].dtype == DataType::kFloat64;
  auto ws = fftWorkSize(g.n, g.outer * g.inner, dbl);
  return fftBufBytes(g, dbl) + (ws ? *ws : 0);
}

}  // namespace

OPFORGE_TACTICS("ai.onnx::DFT", [](OpDef& d) {
  d.tactic(1, "cuda.direct", dftDirect, directApplies, directWorkspace);
  d.tactic(2, "cuda.cufft", dftCufft, cufftApplies, cufftWorkspace);
});

}  // namespace opforge::ops
