// CUDA tactic of ai.onnx::Resize. The scales / sizes / roi inputs live on the device, so three
// kernels run: one thread resolves the scale and roi of every axis (the reference's rules: scales,
// sizes with stretch or keep_aspect_ratio_policy, tf_crop_and_resize roi, opset 10's (X, scales));
// one thread per (axis, output coordinate) builds that coordinate's taps (index offset, weight)
// with the reference's coordinate transforms, nearest modes, linear / cubic / antialiased filters
// and exclude_outside; then one thread per output element sums the product of its axes' taps (or
// takes extrapolation_value). Arithmetic in double, integers rounded half to even, as the
// reference. Tactics: 1 cuda.taps (a thread per element, every axis looked up per element); 2
// cuda.rows (a block per output row, the outer axes' taps looked up once per row).
#include "resize.h"

#include "../common/cuda_common.cuh"
#include "../common/kernel_axis.h"

namespace opforge::ops {
namespace {

enum Ctm : int {
  kHalfPixel,
  kAsymmetric,
  kAlignCorners,
  kPytorchHalf,
  kTfHalfNn,
  kHalfSym,
  kTfCrop
};
enum Nearest : int { kRoundFloor, kRoundCeil, kFloor, kCeil };

struct ResizeCfg {
  int mode;  // 0 nearest, 1 linear, 2 cubic
  int ctm, nearest;
  double a, extrap;
  bool exclude, antialias;
  int policy;  // 0 stretch, 1 not_larger, 2 not_smaller
  bool old;
  int rank;
  int64_t xd[kMaxDims], yd[kMaxDims], xs[kMaxDims];
  bool resized[kMaxDims];
  int naxes;
  int axes[kMaxDims];          // the resized axes in the order scales / sizes list them
  int cap;                     // tap slots per coordinate
  int64_t base[kMaxDims + 1];  // first table entry of each axis
};

ResizeCfg cfgOf(const AttrMap& at, const TensorDesc& x, const TensorDesc& y) {
  ResizeCfg c{};
  const std::string m = at.get<std::string>("mode");
  c.mode = m == "nearest" ? 0 : m == "linear" ? 1 : 2;
  c.old = opsetOf(at) < 11;
  const std::string ctm =
      c.old ? "asymmetric" : at.get<std::string>("coordinate_transformation_mode");
  c.ctm = ctm == "asymmetric"             ? kAsymmetric
          : ctm == "align_corners"        ? kAlignCorners
          : ctm == "pytorch_half_pixel"   ? kPytorchHalf
          : ctm == "tf_half_pixel_for_nn" ? kTfHalfNn
          : ctm == "half_pixel_symmetric" ? kHalfSym
          : ctm == "tf_crop_and_resize"   ? kTfCrop
                                          : kHalfPixel;
  const std::string nm = c.old ? "floor" : at.get<std::string>("nearest_mode");
  c.nearest = nm == "floor"               ? kFloor
              : nm == "ceil"              ? kCeil
              : nm == "round_prefer_ceil" ? kRoundCeil
                                          : kRoundFloor;
  c.a = at.get<double>("cubic_coeff_a");
  c.extrap = at.get<double>("extrapolation_value");
  c.exclude = at.get<int64_t>("exclude_outside") != 0;
  c.antialias = at.get<int64_t>("antialias") != 0;
  const std::string p = at.get<std::string>("keep_aspect_ratio_policy");
  c.policy = p == "not_larger" ? 1 : p == "not_smaller" ? 2 : 0;
  c.rank = x.rank();
  const auto xs = stridesOf(x.dims);
  for (int a = 0; a < c.rank; ++a)
    c.xd[a] = x.dims[a], c.yd[a] = y.dims[a], c.xs[a] = xs[a], c.resized[a] = false;
  std::vector<int> ax;
  if (at.has("axes")) {
    for (int64_t a : at.get<std::vector<int64_t>>("axes"))
      if (a >= -c.rank && a < c.rank)
        ax.push_back(wrapAxis(a, c.rank));  // resizeCuda refuses the rest
  } else {
    for (int i = 0; i < c.rank; ++i) ax.push_back(i);
  }
  c.naxes = static_cast<int>(ax.size());
  for (int i = 0; i < c.naxes && i < kMaxDims; ++i) c.axes[i] = ax[i], c.resized[ax[i]] = true;
  // Tap slots: 1 (nearest), 2 (linear), 4 (cubic); antialiased downsampling widens the filter by
  // 1 / scale (bounded here by the planned sizes).
  int cap = c.mode == 0 ? 1 : c.mode == 1 ? 2 : 4;
  if (c.antialias && c.mode != 0)
    for (int a = 0; a < c.rank; ++a)
      if (c.resized[a] && y.dims[a] > 0 && y.dims[a] < x.dims[a]) {
        const double support = c.mode == 1 ? 1.0 : 2.0;
        // Bounded before the conversion: a ratio of 2^40 / 1 does not fit an int.
        const double taps = 2 * std::ceil(support * static_cast<double>(x.dims[a]) /
                                          static_cast<double>(y.dims[a])) +
                            4;
        cap = std::max<int>(cap, static_cast<int>(std::min(taps, 1024.0)));
      }
  c.cap = std::min(cap, 1024);
  c.base[0] = 0;
  for (int a = 0; a < c.rank; ++a) c.base[a + 1] = c.base[a] + y.dims[a];
  return c;
}

size_t alignUp(size_t v) {
  return (v + 255) / 256 * 256;
}

struct Layout {
  size_t params, counts, offsets, weights, total;
};
Layout layoutOf(const ResizeCfg& c) {
  Layout l;
  const size_t entries = static_cast<size_t>(c.base[c.rank]);
  l.params = 0;
  l.counts = alignUp(3 * kMaxDims * sizeof(double));
  l.offsets = l.counts + alignUp(entries * sizeof(int));
  l.weights = l.offsets + alignUp(entries * c.cap * sizeof(int64_t));
  l.total = l.weights + alignUp(entries * c.cap * sizeof(double));
  return l;
}

__device__ double loadAny(const void* p, int dtype, int64_t i) {
  switch (dtype) {
    case 1:
      return static_cast<const float*>(p)[i];
    case 11:
      return static_cast<const double*>(p)[i];
    case 10:
      return __half2float(static_cast<const __half*>(p)[i]);
    case 16:
      return __bfloat162float(static_cast<const __nv_bfloat16*>(p)[i]);
    case 7:
      return static_cast<double>(static_cast<const int64_t*>(p)[i]);
    case 6:
      return static_cast<const int32_t*>(p)[i];
    default:
      return 0.0;
  }
}

// params: scale[kMaxDims], roi0[kMaxDims], roi1[kMaxDims].
__global__ void resizeParamsKernel(ResizeCfg c, const void* scales, int scales_t, int64_t nscales,
                                   const void* sizes, int sizes_t, const void* roi, int roi_t,
                                   int64_t nroi, double* params) {
  double* scale = params;
  double* roi0 = params + kMaxDims;
  double* roi1 = params + 2 * kMaxDims;
  for (int a = 0; a < c.rank; ++a) scale[a] = 1.0, roi0[a] = 0.0, roi1[a] = 1.0;
  if (scales && nscales > 0) {
    for (int i = 0; i < c.naxes && i < nscales; ++i)
      scale[c.axes[i]] = loadAny(scales, scales_t, i);
  } else if (c.policy == 0) {
    for (int i = 0; i < c.naxes; ++i) {
      const int a = c.axes[i];
      scale[a] = static_cast<double>(c.yd[a]) / static_cast<double>(c.xd[a]);
    }
  } else {
    double s = c.policy == 1 ? 1e300 : 0;
    for (int i = 0; i < c.naxes; ++i) {
      const double r = loadAny(sizes, sizes_t, i) / static_cast<double>(c.xd[c.axes[i]]);
      s = c.policy == 1 ? (r < s ? r : s) : (r > s ? r : s);
    }
    for (int i = 0; i < c.naxes; ++i) scale[c.axes[i]] = s;
  }
  if (!c.old && c.ctm == kTfCrop && roi && nroi > 0) {
    const int64_t n = nroi / 2;
    for (int64_t i = 0; i < n; ++i) {
      const int a = n == c.naxes ? c.axes[i] : static_cast<int>(i);
      if (a < 0 || a >= c.rank) continue;
      roi0[a] = loadAny(roi, roi_t, i);
      roi1[a] = loadAny(roi, roi_t, n + i);
    }
  }
}

__device__ double cubicW(double d, double A) {
  d = fabs(d);
  if (d <= 1) return ((A + 2) * d - (A + 3)) * d * d + 1;
  if (d < 2) return ((A * d - 5 * A) * d + 8 * A) * d - 4 * A;
  return 0.0;
}

// One thread per (axis, output coordinate): its taps.
__global__ void resizeTapsKernel(ResizeCfg c, const double* __restrict__ params,
                                 int* __restrict__ counts, int64_t* __restrict__ offs,
                                 double* __restrict__ wts, DeviceErrorRecord* rec) {
  const int64_t entries = c.base[c.rank], stride = int64_t(gridDim.x) * blockDim.x;
  for (int64_t e = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; e < entries; e += stride) {
    int a = 0;
    while (e >= c.base[a + 1]) ++a;
    const int64_t o = e - c.base[a];
    int64_t* off = offs + e * c.cap;
    double* w = wts + e * c.cap;
    const int64_t in = c.xd[a];
    if (!c.resized[a]) {
      counts[e] = 1;
      off[0] = (o < in ? o : in - 1) * c.xs[a];
      w[0] = 1.0;
      continue;
    }
    const double scale = params[a], r0 = params[kMaxDims + a], r1 = params[2 * kMaxDims + a];
    const double fo = static_cast<double>(o), fin = static_cast<double>(in), fout = fin * scale;
    double x;
    bool outside = false;
    switch (c.ctm) {
      case kAsymmetric:
        x = fo / scale;
        break;
      case kAlignCorners:
        x = fout == 1 ? 0 : fo * (fin - 1) / (fout - 1);
        break;
      case kPytorchHalf:
        x = fout > 1 ? (fo + 0.5) / scale - 0.5 : 0;
        break;
      case kTfHalfNn:
        x = (fo + 0.5) / scale;
        break;
      case kHalfSym: {
        const double adj = static_cast<double>(c.yd[a]) / fout, center = fin / 2;
        x = center * (1 - adj) + (fo + 0.5) / scale - 0.5;
        break;
      }
      case kTfCrop:
        x = fout > 1 ? r0 * (fin - 1) + fo * (r1 - r0) * (fin - 1) / (fout - 1)
                     : 0.5 * (r0 + r1) * (fin - 1);
        outside = x < 0 || x > fin - 1;
        break;
      default:
        x = (fo + 0.5) / scale - 0.5;
    }
    // A NaN, infinite or huge coordinate (dims that do not follow from the scales): extrapolate;
    // below 2^52 the conversions to int64 are defined.
    if (outside || !(fabs(x) <= 0x1p52)) {
      counts[e] = 0;
      continue;
    }
    auto clampi = [&](int64_t i) { return i < 0 ? 0 : i >= in ? in - 1 : i; };
    if (c.mode == 0) {
      const double f = floor(x);
      double r;
      if (c.nearest == kFloor)
        r = f;
      else if (c.nearest == kCeil)
        r = ceil(x);
      else if (x - f == 0.5)
        r = c.nearest == kRoundCeil ? f + 1 : f;
      else
        r = round(x);
      counts[e] = 1;
      off[0] = clampi(static_cast<int64_t>(r)) * c.xs[a];
      w[0] = 1.0;
      continue;
    }
    const int64_t i0 = static_cast<int64_t>(floor(x));
    const double t = x - static_cast<double>(i0);
    int64_t idx[1024];
    double wt[1024];
    int n = 0;
    if (c.antialias && scale < 1) {
      const double support = c.mode == 1 ? 1.0 : 2.0;
      const double ffirst = floor(-support / scale) + 1;
      if (!(2 - 2 * ffirst <= c.cap)) {  // more taps than planned (or a garbage scale)
        reportDeviceError(rec, kDeviceErrorSize, 2,
                          isfinite(ffirst) ? static_cast<int64_t>(2 - 2 * ffirst) : -1, o, c.cap,
                          a);
        counts[e] = 0;
        continue;
      }
      const int64_t first = static_cast<int64_t>(ffirst), last = 2 - first;
      double sum = 0;
      for (int64_t i = first; i < last; ++i) {
        const double d = (static_cast<double>(i) - t) * scale;
        const double v = c.mode == 1 ? fmax(0.0, 1 - fabs(d)) : cubicW(d, c.a);
        idx[n] = i0 + i;
        wt[n++] = v;
        sum += v;
      }
      for (int i = 0; i < n; ++i) wt[i] /= sum;
    } else if (c.mode == 1) {
      idx[0] = i0, wt[0] = 1 - t, idx[1] = i0 + 1, wt[1] = t;
      n = 2;
    } else {
      idx[0] = i0 - 1, wt[0] = cubicW(t + 1, c.a);
      idx[1] = i0, wt[1] = cubicW(t, c.a);
      idx[2] = i0 + 1, wt[2] = cubicW(1 - t, c.a);
      idx[3] = i0 + 2, wt[3] = cubicW(2 - t, c.a);
      n = 4;
    }
    if (c.exclude && (c.antialias && scale < 1 || c.mode == 2)) {
      double sum = 0;
      for (int i = 0; i < n; ++i) {
        if (idx[i] < 0 || idx[i] >= in) wt[i] = 0;
        sum += wt[i];
      }
      for (int i = 0; i < n; ++i) wt[i] = sum != 0 ? wt[i] / sum : 0;
    }
    // Keep the taps with a weight (the reference drops zero weights); at least one.
    int m = 0;
    for (int i = 0; i < n; ++i)
      if (wt[i] != 0) {
        off[m] = clampi(idx[i]) * c.xs[a];
        w[m++] = wt[i];
      }
    if (m == 0) off[0] = 0, w[0] = 0, m = 1;
    counts[e] = m;
  }
}

// Output element i: the sum over its axes' taps (extrapolation_value when an axis has none).
template <typename S>
__device__ __forceinline__ double resizeOne(const S* __restrict__ x, const ResizeCfg& c,
                                            const int* __restrict__ counts,
                                            const int64_t* __restrict__ offs,
                                            const double* __restrict__ wts, int64_t i) {
  int64_t ent[kMaxDims];
  int cnt[kMaxDims];
  int64_t taps = 1;
  {
    int64_t rem = i;
    for (int a = c.rank - 1; a >= 0; --a) {
      const int64_t o = rem % c.yd[a];
      rem /= c.yd[a];
      ent[a] = c.base[a] + o;
      cnt[a] = counts[ent[a]];
      taps *= cnt[a];
    }
  }
  if (taps == 0) return c.extrap;
  double v = 0;
  for (int64_t t = 0; t < taps; ++t) {
    int64_t rem = t, off = 0;
    double w = 1;
    for (int a = c.rank - 1; a >= 0; --a) {
      const int j = static_cast<int>(rem % cnt[a]);
      rem /= cnt[a];
      off += offs[ent[a] * c.cap + j];
      w *= wts[ent[a] * c.cap + j];
    }
    v += w * static_cast<double>(DNum<S>::load(x[off]));
  }
  return v;
}

template <typename S>
__device__ __forceinline__ void resizeStore(S* y, int64_t i, double v) {
  using C = typename DNum<S>::C;
  if constexpr (std::is_integral_v<C>) v = rint(v);
  y[i] = DNum<S>::store(static_cast<C>(v));
}

template <typename S>
__global__ void __launch_bounds__(kThreads)
    resizeKernel(const S* __restrict__ x, S* __restrict__ y, ResizeCfg c,
                 const int* __restrict__ counts, const int64_t* __restrict__ offs,
                 const double* __restrict__ wts, int64_t total) {
  const int64_t stride = int64_t(gridDim.x) * blockDim.x;
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < total; i += stride)
    resizeStore(y, i, resizeOne(x, c, counts, offs, wts, i));
}

// One block per output row (all axes but the last fixed): the taps of the outer axes are looked up
// once per row; when each has one tap (the usual case: only the last two axes resized), an element
// costs its last axis' taps alone. Other rows take the general path per element.
template <typename S>
__global__ void __launch_bounds__(kThreads)
    resizeRowsKernel(const S* __restrict__ x, S* __restrict__ y, ResizeCfg c,
                     const int* __restrict__ counts, const int64_t* __restrict__ offs,
                     const double* __restrict__ wts) {
  const int last = c.rank - 1;
  const int64_t row = blockIdx.x, ow = c.yd[last];
  int64_t off0 = 0;
  double w0 = 1;
  bool simple = true, empty = false;
  {
    int64_t rem = row;
    for (int a = last - 1; a >= 0; --a) {
      const int64_t e = c.base[a] + rem % c.yd[a];
      rem /= c.yd[a];
      const int n = counts[e];
      if (n == 0)
        empty = true;
      else if (n != 1)
        simple = false;
      else
        off0 += offs[e * c.cap], w0 *= wts[e * c.cap];
    }
  }
  for (int64_t ox = threadIdx.x; ox < ow; ox += blockDim.x) {
    const int64_t i = row * ow + ox;
    double v;
    if (!simple) {
      v = resizeOne(x, c, counts, offs, wts, i);
    } else {
      const int64_t e = c.base[last] + ox;
      const int n = counts[e];
      if (empty || n == 0) {
        v = c.extrap;
      } else {
        v = 0;
        for (int j = 0; j < n; ++j)
          v += (wts[e * c.cap + j] * w0) *
               static_cast<double>(DNum<S>::load(x[off0 + offs[e * c.cap + j]]));
      }
    }
    resizeStore(y, i, v);
  }
}

template <bool kRows>
Status resizeCuda(KernelContext& k, std::span<const Tensor> in, std::span<const Tensor> out) {
  const Tensor &x = in[0], &y = out[0];
  if (y.numel() == 0) return Status::ok();
  if (k.attrs().has("axes"))
    OPFORGE_RETURN_IF_ERROR(
        kernelAxes(k.attr<std::vector<int64_t>>("axes"), x.desc.rank()).status());
  const ResizeCfg c = cfgOf(k.attrs(), x.desc, y.desc);
  for (int a = 0; a < c.rank; ++a)  // taps clamp into [0, in - 1]: an empty input axis has none
    if (c.xd[a] == 0)
      return Status::invalid("axis " + std::to_string(a) + " of size 0 can not be resized to " +
                             std::to_string(c.yd[a]));
  const Layout l = layoutOf(c);
  auto* base = static_cast<uint8_t*>(k.workspace());
  auto* params = reinterpret_cast<double*>(base + l.params);
  auto* counts = reinterpret_cast<int*>(base + l.counts);
  auto* offs = reinterpret_cast<int64_t*>(base + l.offsets);
  auto* wts = reinterpret_cast<double*>(base + l.weights);
  cudaStream_t st = streamOf(k);
  const int si = c.old ? 1 : 2;
  const bool has_scales = hasIn(in, si) && in[si].numel() > 0;
  const bool has_sizes = !c.old && hasIn(in, 3) && in[3].numel() > 0;
  const bool has_roi = !c.old && hasIn(in, 1) && in[1].numel() > 0;
  resizeParamsKernel<<<1, 1, 0, st>>>(
      c, has_scales ? in[si].data : nullptr, has_scales ? static_cast<int>(in[si].desc.dtype) : 0,
      has_scales ? in[si].numel() : 0, has_sizes ? in[3].data : nullptr,
      has_sizes ? static_cast<int>(in[3].desc.dtype) : 0, has_roi ? in[1].data : nullptr,
      has_roi ? static_cast<int>(in[1].desc.dtype) : 0, has_roi ? in[1].numel() : 0, params);
  OPFORGE_RETURN_IF_ERROR(launched("Resize"));
  resizeTapsKernel<<<blocksFor(c.base[c.rank]), 64, 0, st>>>(c, params, counts, offs, wts,
                                                             k.errorRecord());
  OPFORGE_RETURN_IF_ERROR(launched("Resize"));
  return visitDevice<kFloats | kSigned | kUnsigned>(
      x.desc.dtype, "Resize", [&](auto tag) -> Status {
        using S = typename decltype(tag)::type;
        if constexpr (kRows) {
          const int64_t ow = y.desc.dims.back();
          const int threads = static_cast<int>(std::min<int64_t>(kThreads, (ow + 31) / 32 * 32));
          resizeRowsKernel<S><<<static_cast<unsigned>(y.numel() / ow), threads, 0, st>>>(
              static_cast<const S*>(x.data), static_cast<S*>(y.data), c, counts, offs, wts);
        } else {
          resizeKernel<S><<<blocksFor(y.numel()), kThreads, 0, st>>>(static_cast<const S*>(x.data),
                                                                     static_cast<S*>(y.data), c,
                                                                     counts, offs, wts, y.numel());
        }
        return launched("Resize");
      });
}

bool resizeApplies(const AttrMap& a, std::span<const TensorDesc> in,
                   std::span<const TensorDesc> out) {
  if (!allLinear(in, out) || in[0].rank() > kMaxDims || in[0].rank() == 0) return false;
  if (a.has("axes") && a.get<std::vector<int64_t>>("axes").size() > static_cast<size_t>(kMaxDims))
    return false;
  return true;
}

// One block per output row: rows must fit a grid.
bool resizeRowsApplies(const AttrMap& a, std::span<const TensorDesc> in,
                       std::span<const TensorDesc> out) {
  if (!resizeApplies(a, in, out) || out[0].rank() < 2 || out[0].dims.back() == 0) return false;
  return out[0].numel() / out[0].dims.back() < (int64_t{1} << 31);
}

size_t resizeWorkspace(const AttrMap& a, std::span<const TensorDesc> in,
                       std::span<const TensorDesc> out) {
  return layoutOf(cfgOf(a, in[0], out[0])).total;
}
}  // namespace

// The tactics as functions (resize.h): Upsample runs them with a Resize-10 attribute map.
Status resizeCudaTaps(KernelContext& k, std::span<const Tensor> in, std::span<const Tensor> out) {
  return resizeCuda<false>(k, in, out);
}
Status resizeCudaRows(KernelContext& k, std::span<const Tensor> in, std::span<const Tensor> out) {
  return resizeCuda<true>(k, in, out);
}
bool resizeCudaApplies(const AttrMap& a, std::span<const TensorDesc> in,
                       std::span<const TensorDesc> out) {
  return resizeApplies(a, in, out);
}
bool resizeCudaRowsApplies(const AttrMap& a, std::span<const TensorDesc> in,
                           std::span<const TensorDesc> out) {
  return resizeRowsApplies(a, in, out);
}
size_t resizeCudaWorkspace(const AttrMap& a, std::span<const TensorDesc> in,
                           std::span<const TensorDesc> out) {
  return resizeWorkspace(a, in, out);
}

OPFORGE_TACTICS("ai.onnx::Resize", [](OpDef& d) {
  d.tactic(1, "cuda.taps", resizeCuda<false>, resizeApplies, resizeWorkspace);
  d.tactic(2, "cuda.rows", resizeCuda<true>, resizeRowsApplies, resizeWorkspace);
});

}  // namespace opforge::ops
