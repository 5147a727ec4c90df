#include "conv_cuda.h"

#include "cuda_common.cuh"
#include "dmath.cuh"

#if defined(OPFORGE_WITH_CUDNN)
#include <cudnn.h>
#endif

namespace opforge::ops {

// ---------------------------------------------------------------------------------------------
// Epilogue and direct kernels
// ---------------------------------------------------------------------------------------------

namespace {

template <typename S>
using ConvT = std::conditional_t<std::is_same_v<S, double>, double, float>;

// y = act(y + bias[c] + z) over (n, m, sp).
template <typename S>
__global__ void __launch_bounds__(kThreads)
    convEpilogueKernel(S* __restrict__ y, const S* __restrict__ bias, const S* __restrict__ z,
                       int64_t total, int64_t m, int64_t sp, bool hwc, Act act) {
  using T = ConvT<S>;
  const int64_t stride = int64_t(gridDim.x) * blockDim.x;
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < total; i += stride) {
    T v = static_cast<T>(DNum<S>::load(y[i]));
    if (bias) v += static_cast<T>(DNum<S>::load(bias[hwc ? i % m : (i / sp) % m]));
    if (z) v += static_cast<T>(DNum<S>::load(z[i]));
    y[i] = DNum<S>::store(static_cast<typename DNum<S>::C>(applyAct(v, act)));
  }
}

// The same, V elements a thread with one 16-byte load of y and z: hwc with m % V == 0 (the V
// channels are consecutive) or LINEAR with sp % V == 0 (one channel).
template <typename S, int V>
__global__ void __launch_bounds__(kThreads)
    convEpilogueVecKernel(S* __restrict__ y, const S* __restrict__ bias, const S* __restrict__ z,
                          int64_t vecs, int64_t m, int64_t sp, bool hwc, Act act) {
  using T = ConvT<S>;
  using Pack = Vec<S, V>;
  const int64_t stride = int64_t(gridDim.x) * blockDim.x;
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < vecs; i += stride) {
    Pack py = reinterpret_cast<const Pack*>(y)[i], pz{};
    if (z) pz = reinterpret_cast<const Pack*>(z)[i];
    const int64_t e0 = i * V, c0 = hwc ? e0 % m : (e0 / sp) % m;
    for (int e = 0; e < V; ++e) {
      T v = static_cast<T>(DNum<S>::load(py.v[e]));
      if (bias) v += static_cast<T>(DNum<S>::load(bias[hwc ? c0 + e : c0]));
      if (z) v += static_cast<T>(DNum<S>::load(pz.v[e]));
      py.v[e] = DNum<S>::store(static_cast<typename DNum<S>::C>(applyAct(v, act)));
    }
    reinterpret_cast<Pack*>(y)[i] = py;
  }
}

struct ConvGeomDev {
  int nd;
  int64_t n, c, m, group, cg, mg, ip, op, taps;
  int64_t isz[kMaxDims], osz[kMaxDims], k[kMaxDims], s[kMaxDims], d[kMaxDims], pb[kMaxDims];
};

ConvGeomDev geomOf(const ConvArgs& a) {
  ConvGeomDev g{};
  g.nd = a.nd;
  g.n = a.n;
  g.c = a.c;
  g.m = a.m;
  g.group = a.group;
  g.cg = a.c / a.group;
  g.mg = a.m / a.group;
  g.ip = g.op = g.taps = 1;
  for (int i = 0; i < a.nd; ++i) {
    g.isz[i] = a.isz[i], g.osz[i] = a.osz[i], g.k[i] = a.k[i], g.s[i] = a.s[i], g.d[i] = a.d[i],
    g.pb[i] = a.pb[i];
    g.ip *= a.isz[i], g.op *= a.osz[i], g.taps *= a.k[i];
  }
  return g;
}

template <typename S>
__global__ void __launch_bounds__(kThreads)
    convDirectKernel(ConvGeomDev g, const S* __restrict__ x, const S* __restrict__ w,
                     const S* __restrict__ bias, const S* __restrict__ z, S* __restrict__ y,
                     Act act) {
  using T = ConvT<S>;
  const int64_t total = g.n * g.m * g.op, stride = int64_t(gridDim.x) * blockDim.x;
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < total; i += stride) {
    const int64_t o = i % g.op, t1 = i / g.op, mo = t1 % g.m, b = t1 / g.m;
    int64_t oc[kMaxDims];
    {
      int64_t rem = o;
      for (int a = g.nd - 1; a >= 0; --a) oc[a] = rem % g.osz[a], rem /= g.osz[a];
    }
    const int64_t grp = mo / g.mg;
    T acc = bias ? static_cast<T>(DNum<S>::load(bias[mo])) : T(0);
    for (int64_t t = 0; t < g.taps; ++t) {
      int64_t flat = 0, rem = t;
      bool inside = true;
      int64_t jc[kMaxDims];
      for (int a = g.nd - 1; a >= 0; --a) jc[a] = rem % g.k[a], rem /= g.k[a];
      for (int a = 0; a < g.nd && inside; ++a) {
        const int64_t q = oc[a] * g.s[a] - g.pb[a] + jc[a] * g.d[a];
        inside = q >= 0 && q < g.isz[a];
        flat = flat * g.isz[a] + q;
      }
      if (!inside) continue;
      const S* xp = x + (b * g.c + grp * g.cg) * g.ip + flat;
      const S* wp = w + mo * g.cg * g.taps + t;
      for (int64_t ci = 0; ci < g.cg; ++ci)
        acc += static_cast<T>(DNum<S>::load(xp[ci * g.ip])) *
               static_cast<T>(DNum<S>::load(wp[ci * g.taps]));
    }
    if (z) acc += static_cast<T>(DNum<S>::load(z[i]));
    y[i] = DNum<S>::store(static_cast<typename DNum<S>::C>(applyAct(acc, act)));
  }
}

// Transposed: y[b, mo, pos] = sum over ci of the group, taps j with pos = i * s - pb + j * d.
template <typename S>
__global__ void __launch_bounds__(kThreads)
    convTransposeDirectKernel(ConvGeomDev g, const S* __restrict__ x, const S* __restrict__ w,
                              const S* __restrict__ bias, S* __restrict__ y) {
  using T = ConvT<S>;
  const int64_t total = g.n * g.m * g.op, stride = int64_t(gridDim.x) * blockDim.x;
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < total; i += stride) {
    const int64_t o = i % g.op, t1 = i / g.op, mo = t1 % g.m, b = t1 / g.m;
    int64_t oc[kMaxDims];
    {
      int64_t rem = o;
      for (int a = g.nd - 1; a >= 0; --a) oc[a] = rem % g.osz[a], rem /= g.osz[a];
    }
    const int64_t gi = mo / g.mg, ml = mo % g.mg;
    T acc = bias ? static_cast<T>(DNum<S>::load(bias[mo])) : T(0);
    for (int64_t t = 0; t < g.taps; ++t) {
      int64_t flat = 0, rem = t;
      bool inside = true;
      int64_t jc[kMaxDims];
      for (int a = g.nd - 1; a >= 0; --a) jc[a] = rem % g.k[a], rem /= g.k[a];
      for (int a = 0; a < g.nd && inside; ++a) {
        const int64_t q = oc[a] + g.pb[a] - jc[a] * g.d[a];
        inside = q >= 0 && q % g.s[a] == 0 && q / g.s[a] < g.isz[a];
        flat = flat * g.isz[a] + (inside ? q / g.s[a] : 0);
      }
      if (!inside) continue;
      for (int64_t cl = 0; cl < g.cg; ++cl) {
        const int64_t ci = gi * g.cg + cl;
        acc += static_cast<T>(DNum<S>::load(x[(b * g.c + ci) * g.ip + flat])) *
               static_cast<T>(DNum<S>::load(w[(ci * g.mg + ml) * g.taps + t]));
      }
    }
    y[i] = DNum<S>::store(static_cast<typename DNum<S>::C>(acc));
  }
}

Status epilogue(const ConvArgs& a, cudaStream_t st) {
  if (!a.bias && !a.z && a.act == Act::kNone) return Status::ok();
  int64_t sp = 1;
  for (int64_t v : a.osz) sp *= v;
  const int64_t total = a.n * a.m * sp;
  if (total == 0) return Status::ok();
  return visitDevice<kFloats>(a.dtype, "Conv epilogue", [&](auto tag) -> Status {
    using S = typename decltype(tag)::type;
    constexpr int kVec = 16 / sizeof(S);
    if (kVec > 1 && total % kVec == 0 && (a.hwc ? a.m % kVec == 0 : sp % kVec == 0) &&
        aligned16(a.y) && (!a.z || aligned16(a.z))) {
      convEpilogueVecKernel<S, kVec><<<blocksFor(total / kVec), kThreads, 0, st>>>(
          static_cast<S*>(a.y), static_cast<const S*>(a.bias), static_cast<const S*>(a.z),
          total / kVec, a.m, sp, a.hwc, a.act);
      return launched("Conv epilogue");
    }
    convEpilogueKernel<S><<<blocksFor(total), kThreads, 0, st>>>(
        static_cast<S*>(a.y), static_cast<const S*>(a.bias), static_cast<const S*>(a.z), total, a.m,
        sp, a.hwc, a.act);
    return launched("Conv epilogue");
  });
}

}  // namespace

Status convEpilogue(const ConvArgs& a, void* stream) {
  return epilogue(a, static_cast<cudaStream_t>(stream));
}

bool convDirectApplies(const ConvArgs& a) {
  return !a.hwc && a.nd >= 1 && a.nd <= kMaxDims &&
         (a.dtype == DataType::kFloat32 || a.dtype == DataType::kFloat16 ||
          a.dtype == DataType::kBFloat16 || a.dtype == DataType::kFloat64);
}

Status convDirect(const ConvArgs& a, void* stream) {
  const ConvGeomDev g = geomOf(a);
  const int64_t total = g.n * g.m * g.op;
  if (total == 0) return Status::ok();
  return visitDevice<kFloats>(a.dtype, "Conv", [&](auto tag) -> Status {
    using S = typename decltype(tag)::type;
    convDirectKernel<S><<<blocksFor(total), kThreads, 0, static_cast<cudaStream_t>(stream)>>>(
        g, static_cast<const S*>(a.x), static_cast<const S*>(a.w), static_cast<const S*>(a.bias),
        static_cast<const S*>(a.z), static_cast<S*>(a.y), a.act);
    return launched("Conv (direct)");
  });
}

Status convTransposeDirect(const ConvArgs& a, void* stream) {
  const ConvGeomDev g = geomOf(a);
  const int64_t total = g.n * g.m * g.op;
  if (total == 0) return Status::ok();
  return visitDevice<kFloats>(a.dtype, "ConvTranspose", [&](auto tag) -> Status {
    using S = typename decltype(tag)::type;
    convTransposeDirectKernel<S>
        <<<blocksFor(total), kThreads, 0, static_cast<cudaStream_t>(stream)>>>(
            g, static_cast<const S*>(a.x), static_cast<const S*>(a.w),
            static_cast<const S*>(a.bias), static_cast<S*>(a.y));
    return launched("ConvTranspose (direct)");
  });
}

// ---------------------------------------------------------------------------------------------
// cuDNN
// ---------------------------------------------------------------------------------------------

#if defined(OPFORGE_WITH_CUDNN)

namespace {

Status dnnStatus(cudnnStatus_t s, const char* what) {
  if (s == CUDNN_STATUS_SUCCESS) return Status::ok();
  return Status::runtime(std::string("cuDNN ") + what + ": " + cudnnGetErrorString(s));
}

Result<cudnnHandle_t> dnnHandle(cudaStream_t stream) {
  OPFORGE_ASSIGN_OR_RETURN(void* h, cudnnHandleFor(stream));
  return static_cast<cudnnHandle_t>(h);
}

bool dnnTypes(DataType t, cudnnDataType_t* data, cudnnDataType_t* compute, cudnnMathType_t* math) {
  switch (t) {
    case DataType::kFloat32:
      *data = *compute = CUDNN_DATA_FLOAT, *math = CUDNN_FMA_MATH;
      return true;
    case DataType::kFloat16:
      *data = CUDNN_DATA_HALF, *compute = CUDNN_DATA_FLOAT, *math = CUDNN_TENSOR_OP_MATH;
      return true;
    case DataType::kBFloat16:
      *data = CUDNN_DATA_BFLOAT16, *compute = CUDNN_DATA_FLOAT, *math = CUDNN_TENSOR_OP_MATH;
      return true;
    case DataType::kFloat64:
      *data = *compute = CUDNN_DATA_DOUBLE, *math = CUDNN_DEFAULT_MATH;
      return true;
    default:
      return false;
  }
}

struct DnnDescs {
  cudnnTensorDescriptor_t x = nullptr, y = nullptr, bias = nullptr;
  cudnnFilterDescriptor_t w = nullptr;
  cudnnConvolutionDescriptor_t conv = nullptr;
  cudnnActivationDescriptor_t act = nullptr;
  ~DnnDescs() {
    if (act) cudnnDestroyActivationDescriptor(act);
    if (conv) cudnnDestroyConvolutionDescriptor(conv);
    if (w) cudnnDestroyFilterDescriptor(w);
    if (bias) cudnnDestroyTensorDescriptor(bias);
    if (y) cudnnDestroyTensorDescriptor(y);
    if (x) cudnnDestroyTensorDescriptor(x);
  }
};

Status tensorDesc(cudnnTensorDescriptor_t* d, cudnnDataType_t t, const std::vector<int>& dims) {
  OPFORGE_RETURN_IF_ERROR(dnnStatus(cudnnCreateTensorDescriptor(d), "tensor descriptor"));
  std::vector<int> str(dims.size());
  int s = 1;
  for (int i = static_cast<int>(dims.size()) - 1; i >= 0; --i) str[i] = s, s *= dims[i];
  return dnnStatus(
      cudnnSetTensorNdDescriptor(*d, t, static_cast<int>(dims.size()), dims.data(), str.data()),
      "tensor descriptor");
}

bool fitsInt(const ConvArgs& a) {
  auto ok = [](int64_t v) { return v >= 0 && v < (int64_t{1} << 31); };
  bool r = ok(a.n) && ok(a.c) && ok(a.m) && ok(a.group);
  for (int i = 0; i < a.nd; ++i) r = r && ok(a.isz[i]) && ok(a.osz[i]) && ok(a.k[i]);
  int64_t xn = a.n * a.c, yn = a.n * a.m;
  for (int i = 0; i < a.nd; ++i) xn *= a.isz[i], yn *= a.osz[i];
  return r && ok(xn) && ok(yn);
}

// Descriptors of the forward convolution "in -> out" (for the transpose: y -> x). 1-D problems
// become 2-D with a unit leading axis.
Status describeConv(const ConvArgs& a, bool transpose, DnnDescs& d) {
  cudnnDataType_t dt, ct;
  cudnnMathType_t math;
  if (!dnnTypes(a.dtype, &dt, &ct, &math)) return Status::unsupported("cuDNN: data type");
  if (a.nd < 1 || a.nd > 3) return Status::unsupported("cuDNN: 1 to 3 spatial axes");
  if (a.hwc) return Status::unsupported("cuDNN legacy API: LINEAR tensors only");
  for (int i = 0; i < a.nd; ++i)
    if (a.pb[i] != a.pe[i]) return Status::unsupported("cuDNN: asymmetric padding");
  if (!fitsInt(a)) return Status::unsupported("cuDNN: sizes beyond 32 bits");
  const bool one = a.nd == 1;
  std::vector<int> xs{static_cast<int>(a.n), static_cast<int>(a.c)},
      ys{static_cast<int>(a.n), static_cast<int>(a.m)};
  // Forward filter dims: (out channels, in channels / group, k...). Conv: W is (m, c/g, k);
  // transpose: the forward conv maps y (m channels) to x (c channels): W is (c, m/g, k).
  std::vector<int> ws =
      transpose ? std::vector<int>{static_cast<int>(a.c), static_cast<int>(a.m / a.group)}
                : std::vector<int>{static_cast<int>(a.m), static_cast<int>(a.c / a.group)};
  std::vector<int> pad, str, dil;
  if (one) {
    xs.push_back(1), ys.push_back(1), ws.push_back(1), pad.push_back(0), str.push_back(1),
        dil.push_back(1);
  }
  for (int i = 0; i < a.nd; ++i) {
    xs.push_back(static_cast<int>(a.isz[i]));
    ys.push_back(static_cast<int>(a.osz[i]));
    ws.push_back(static_cast<int>(a.k[i]));
    pad.push_back(static_cast<int>(a.pb[i]));
    str.push_back(static_cast<int>(a.s[i]));
    dil.push_back(static_cast<int>(a.d[i]));
  }
  OPFORGE_RETURN_IF_ERROR(tensorDesc(&d.x, dt, xs));
  OPFORGE_RETURN_IF_ERROR(tensorDesc(&d.y, dt, ys));
  OPFORGE_RETURN_IF_ERROR(dnnStatus(cudnnCreateFilterDescriptor(&d.w), "filter descriptor"));
  OPFORGE_RETURN_IF_ERROR(
      dnnStatus(cudnnSetFilterNdDescriptor(d.w, dt, CUDNN_TENSOR_NCHW, static_cast<int>(ws.size()),
                                           ws.data()),
                "filter descriptor"));
  OPFORGE_RETURN_IF_ERROR(
      dnnStatus(cudnnCreateConvolutionDescriptor(&d.conv), "convolution descriptor"));
  OPFORGE_RETURN_IF_ERROR(dnnStatus(
      cudnnSetConvolutionNdDescriptor(d.conv, static_cast<int>(pad.size()), pad.data(), str.data(),
                                      dil.data(), CUDNN_CROSS_CORRELATION, ct),
      "convolution descriptor"));
  OPFORGE_RETURN_IF_ERROR(
      dnnStatus(cudnnSetConvolutionGroupCount(d.conv, static_cast<int>(a.group)), "group count"));
  OPFORGE_RETURN_IF_ERROR(dnnStatus(cudnnSetConvolutionMathType(d.conv, math), "math type"));
  // The forward output of the descriptors must be the planned one.
  std::vector<int> out(xs.size());
  const cudnnTensorDescriptor_t in = transpose ? d.y : d.x;
  OPFORGE_RETURN_IF_ERROR(dnnStatus(cudnnGetConvolutionNdForwardOutputDim(
                                        d.conv, in, d.w, static_cast<int>(out.size()), out.data()),
                                    "output size"));
  if (out != (transpose ? xs : ys))
    return Status::unsupported("cuDNN: output size differs from the plan");
  std::vector<int> bs(xs.size(), 1);
  bs[1] = static_cast<int>(a.m);
  OPFORGE_RETURN_IF_ERROR(tensorDesc(&d.bias, dt, bs));
  return Status::ok();
}

const cudnnConvolutionFwdAlgo_t kFwd[kDnnFwdAlgos] = {
    CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM, CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM,
    CUDNN_CONVOLUTION_FWD_ALGO_GEMM, CUDNN_CONVOLUTION_FWD_ALGO_WINOGRAD,
    CUDNN_CONVOLUTION_FWD_ALGO_WINOGRAD_NONFUSED};
const cudnnConvolutionBwdDataAlgo_t kBwd[kDnnBwdAlgos] = {
    CUDNN_CONVOLUTION_BWD_DATA_ALGO_0, CUDNN_CONVOLUTION_BWD_DATA_ALGO_1,
    CUDNN_CONVOLUTION_BWD_DATA_ALGO_WINOGRAD, CUDNN_CONVOLUTION_BWD_DATA_ALGO_WINOGRAD_NONFUSED};

constexpr size_t kMaxDnnWorkspace = size_t{512} << 20;

// cuDNN's fused bias + residual + activation applies (precomputed implicit GEMM, ReLU / identity).
bool fusedPath(const ConvArgs& a, int algo) {
  return kFwd[algo] == CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM && a.bias &&
         (a.act == Act::kNone || a.act == Act::kRelu);
}

}  // namespace

bool haveCudnn() {
  return true;
}

Status convGraph(const ConvArgs& a, int rank, void* workspace, size_t workspace_size,
                 void* stream) {
  int64_t total = a.n * a.m;
  for (int64_t v : a.osz) total *= v;
  if (total == 0) return Status::ok();
  OPFORGE_ASSIGN_OR_RETURN(bool fused, convGraphRun(a, rank, workspace, workspace_size, stream));
  return fused ? Status::ok() : epilogue(a, static_cast<cudaStream_t>(stream));
}

bool convDnnApplies(const ConvArgs& a, int algo, size_t* workspace) {
  if (algo < 0 || algo >= kDnnFwdAlgos) return false;
  auto h = dnnHandle(nullptr);
  if (!h) return false;
  DnnDescs d;
  if (!describeConv(a, false, d)) return false;
  size_t ws = 0;
  if (cudnnGetConvolutionForwardWorkspaceSize(*h, d.x, d.w, d.conv, d.y, kFwd[algo], &ws) !=
      CUDNN_STATUS_SUCCESS)
    return false;
  if (ws > kMaxDnnWorkspace) return false;
  if (workspace) *workspace = ws;
  return true;
}

Status convDnn(const ConvArgs& a, int algo, void* workspace, size_t workspace_size, void* stream) {
  int64_t total = a.n * a.m;
  for (int64_t v : a.osz) total *= v;
  if (total == 0) return Status::ok();
  auto st = static_cast<cudaStream_t>(stream);
  OPFORGE_ASSIGN_OR_RETURN(cudnnHandle_t h, dnnHandle(st));
  DnnDescs d;
  OPFORGE_RETURN_IF_ERROR(describeConv(a, false, d));
  const float f1 = 1.f, f0 = 0.f;
  const double d1 = 1.0, d0 = 0.0;
  const bool f64 = a.dtype == DataType::kFloat64;
  const void* one = f64 ? static_cast<const void*>(&d1) : static_cast<const void*>(&f1);
  const void* zero = f64 ? static_cast<const void*>(&d0) : static_cast<const void*>(&f0);
  if (fusedPath(a, algo)) {
    OPFORGE_RETURN_IF_ERROR(
        dnnStatus(cudnnCreateActivationDescriptor(&d.act), "activation descriptor"));
    OPFORGE_RETURN_IF_ERROR(dnnStatus(
        cudnnSetActivationDescriptor(
            d.act, a.act == Act::kRelu ? CUDNN_ACTIVATION_RELU : CUDNN_ACTIVATION_IDENTITY,
            CUDNN_PROPAGATE_NAN, 0.0),
        "activation descriptor"));
    // y = act(conv(x, w) + alpha2 * z + bias); without a residual z is y with alpha2 = 0.
    return dnnStatus(cudnnConvolutionBiasActivationForward(
                         h, one, d.x, a.x, d.w, a.w, d.conv, kFwd[algo], workspace, workspace_size,
                         a.z ? one : zero, d.y, a.z ? a.z : a.y, d.bias, a.bias, d.act, d.y, a.y),
                     "fused convolution");
  }
  OPFORGE_RETURN_IF_ERROR(
      dnnStatus(cudnnConvolutionForward(h, one, d.x, a.x, d.w, a.w, d.conv, kFwd[algo], workspace,
                                        workspace_size, zero, d.y, a.y),
                "convolution"));
  return epilogue(a, st);
}

bool convTransposeDnnApplies(const ConvArgs& a, int algo, size_t* workspace) {
  if (algo < 0 || algo >= kDnnBwdAlgos) return false;
  auto h = dnnHandle(nullptr);
  if (!h) return false;
  DnnDescs d;
  if (!describeConv(a, true, d)) return false;
  size_t ws = 0;
  // Backward data: dy = x (the op's input), dx = y (the op's output).
  if (cudnnGetConvolutionBackwardDataWorkspaceSize(*h, d.w, d.x, d.conv, d.y, kBwd[algo], &ws) !=
      CUDNN_STATUS_SUCCESS)
    return false;
  if (ws > kMaxDnnWorkspace) return false;
  if (workspace) *workspace = ws;
  return true;
}

Status convTransposeDnn(const ConvArgs& a, int algo, void* workspace, size_t workspace_size,
                        void* stream) {
  int64_t total = a.n * a.m;
  for (int64_t v : a.osz) total *= v;
  if (total == 0) return Status::ok();
  auto st = static_cast<cudaStream_t>(stream);
  OPFORGE_ASSIGN_OR_RETURN(cudnnHandle_t h, dnnHandle(st));
  DnnDescs d;
  OPFORGE_RETURN_IF_ERROR(describeConv(a, true, d));
  const float f1 = 1.f, f0 = 0.f;
  const double d1 = 1.0, d0 = 0.0;
  const bool f64 = a.dtype == DataType::kFloat64;
  const void* one = f64 ? static_cast<const void*>(&d1) : static_cast<const void*>(&f1);
  const void* zero = f64 ? static_cast<const void*>(&d0) : static_cast<const void*>(&f0);
  OPFORGE_RETURN_IF_ERROR(
      dnnStatus(cudnnConvolutionBackwardData(h, one, d.w, a.w, d.x, a.x, d.conv, kBwd[algo],
                                             workspace, workspace_size, zero, d.y, a.y),
                "transposed convolution"));
  ConvArgs e = a;
  e.z = nullptr;
  e.act = Act::kNone;
  return epilogue(e, st);
}

#else  // no cuDNN

bool haveCudnn() {
  return false;
}
Result<void*> cudnnHandleFor(void*) {
  return Status::unsupported("opforge was built without cuDNN");
}
bool convGraphApplies(const ConvArgs&, int, size_t*) {
  return false;
}
Status convGraph(const ConvArgs&, int, void*, size_t, void*) {
  return Status::unsupported("opforge was built without cuDNN");
}
Result<bool> convGraphRun(const ConvArgs&, int, void*, size_t, void*) {
  return Status::unsupported("opforge was built without cuDNN");
}
bool convDnnApplies(const ConvArgs&, int, size_t*) {
  return false;
}
Status convDnn(const ConvArgs&, int, void*, size_t, void*) {
  return Status::unsupported("opforge was built without cuDNN");
}
bool convTransposeDnnApplies(const ConvArgs&, int, size_t*) {
  return false;
}
Status convTransposeDnn(const ConvArgs&, int, void*, size_t, void*) {
  return Status::unsupported("opforge was built without cuDNN");
}

#endif

}  // namespace opforge::ops
