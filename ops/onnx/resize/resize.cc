// ONNX Resize: nearest, (multi)linear and cubic interpolation over any axes.
//
// Output size: `sizes` (with keep_aspect_ratio_policy not_larger / not_smaller: one scale for
// all resized axes, size = floor(scale * in + 0.5)) or floor(in * scales). An output coordinate o
// maps to the input coordinate x by coordinate_transformation_mode (s = the scale):
//   half_pixel (o + 0.5) / s - 0.5        pytorch_half_pixel: the same, 0 when out == 1
//   asymmetric o / s                      tf_half_pixel_for_nn: (o + 0.5) / s
//   align_corners o * (in - 1) / (in * s - 1)
//   half_pixel_symmetric: half_pixel shifted so that the resized extent stays centred
//   tf_crop_and_resize: roi start * (in - 1) + o * (end - start) * (in - 1) / (in * s - 1); outside
//                       [0, in - 1] the output is extrapolation_value
// nearest rounds x by nearest_mode; linear blends floor(x) and floor(x) + 1; cubic uses the four
// neighbours with Keys' kernel (cubic_coeff_a). Neighbours outside the input repeat the edge
// (or, with exclude_outside, get weight 0 and the rest is renormalised). With antialias, a
// downsampling linear/cubic filter is stretched by 1 / scale and normalised (the ONNX reference).
// Opset 10 Resize (X, scales) is read as asymmetric nearest/linear.
#include <algorithm>
#include <cmath>

#include "resize.h"

#include "../common/kernel_axis.h"
#include "../common/util.h"

namespace opforge::ops {
namespace {

struct Cfg {
  int mode = 0;  // 0 nearest, 1 linear, 2 cubic
  std::string ctm, nearest;
  double a = -0.75, extrap = 0;
  bool exclude = false, antialias = false;
  std::string policy;
  bool old = false;  // opset 10: inputs (X, scales)
};

Cfg cfgOf(const AttrMap& at) {
  Cfg c;
  const std::string m = at.get<std::string>("mode");
  c.mode = m == "nearest" ? 0 : m == "linear" ? 1 : 2;
  c.old = opsetOf(at) < 11;
  c.ctm = c.old ? "asymmetric" : at.get<std::string>("coordinate_transformation_mode");
  c.nearest = c.old ? "floor" : at.get<std::string>("nearest_mode");
  c.a = at.get<double>("cubic_coeff_a");
  c.extrap = at.get<double>("extrapolation_value");
  c.exclude = at.get<int64_t>("exclude_outside") != 0;
  c.antialias = at.get<int64_t>("antialias") != 0;
  c.policy = at.get<std::string>("keep_aspect_ratio_policy");
  return c;
}

Result<std::vector<int>> resizedAxes(const AttrMap& at, int r) {
  if (at.has("axes")) return kernelAxes(at.get<std::vector<int64_t>>("axes"), r);
  std::vector<int> ax;
  for (int i = 0; i < r; ++i) ax.push_back(i);
  return ax;
}

// A scale that makes a dimension and a source coordinate: positive and finite.
Status checkScale(double scale) {
  if (!(scale > 0) || !std::isfinite(scale))
    return Status::invalid("scale " + std::to_string(scale) + " must be a positive finite number");
  return Status::ok();
}

}  // namespace

Result<DimExpr> resizeScaledDim(const DimExpr& in, double scale) {
  OPFORGE_RETURN_IF_ERROR(checkScale(scale));
  if (in.isConst()) {
    const double v = std::floor(static_cast<double>(in.constValue()) * scale);
    if (!(v <= static_cast<double>(kMaxElements)))  // also keeps the conversion defined
      return Status::invalid("scale " + std::to_string(scale) + " makes an axis of " +
                             std::to_string(in.constValue()) + " longer than 2^40");
    return DimExpr(static_cast<int64_t>(v));
  }
  for (int64_t q = 1; q <= 64; ++q) {
    const double p = scale * static_cast<double>(q);
    if (p == std::floor(p) && p < 1e9) return floorDiv(in * static_cast<int64_t>(p), q);
  }
  return Status::invalid("scale " + std::to_string(scale) +
                         " of a dynamic axis must be a simple fraction");
}

namespace {

// One scale for every resized axis (keep_aspect_ratio_policy).
double aspectScale(const Cfg& cfg, const std::vector<int64_t>& in,
                   const std::vector<int64_t>& sizes, const std::vector<int>& ax) {
  double s = cfg.policy == "not_larger" ? 1e300 : 0;
  for (size_t i = 0; i < ax.size(); ++i) {
    const double r = static_cast<double>(sizes[i]) / static_cast<double>(in[ax[i]]);
    s = cfg.policy == "not_larger" ? std::min(s, r) : std::max(s, r);
  }
  return s;
}

struct Tap {
  int64_t index;
  double weight;
};

// Taps of output coordinate o on one axis (empty: outside, extrapolate). A source coordinate
// that is not finite or beyond 2^52, or an antialias filter wider than the planned dims allow, is
// an error: the output dims of a loaded plan need not follow from its scales.
Result<std::vector<Tap>> tapsOf(const Cfg& cfg, int64_t o, int64_t in, int64_t out, double scale,
                                double roi0, double roi1) {
  // The resized length is in * scale, not rounded (the ONNX reference): it differs from `out`
  // when a scale does not give a whole size.
  const double fo = static_cast<double>(o), fin = static_cast<double>(in), fout = fin * scale;
  double x;
  if (cfg.ctm == "asymmetric") {
    x = fo / scale;
  } else if (cfg.ctm == "align_corners") {
    x = fout == 1 ? 0 : fo * (fin - 1) / (fout - 1);
  } else if (cfg.ctm == "pytorch_half_pixel") {
    x = fout > 1 ? (fo + 0.5) / scale - 0.5 : 0;
  } else if (cfg.ctm == "tf_half_pixel_for_nn") {
    x = (fo + 0.5) / scale;
  } else if (cfg.ctm == "half_pixel_symmetric") {
    const double adj = static_cast<double>(out) / fout, center = fin / 2;
    x = center * (1 - adj) + (fo + 0.5) / scale - 0.5;
  } else if (cfg.ctm == "tf_crop_and_resize") {
    x = fout > 1 ? roi0 * (fin - 1) + fo * (roi1 - roi0) * (fin - 1) / (fout - 1)
                 : 0.5 * (roi0 + roi1) * (fin - 1);
    if (x < 0 || x > fin - 1) return std::vector<Tap>{};
  } else {  // half_pixel
    x = (fo + 0.5) / scale - 0.5;
  }
  if (!(std::fabs(x) <= 0x1p52))
    return Status::invalid("output " + std::to_string(o) + " of " + std::to_string(out) +
                           " maps to source coordinate " + std::to_string(x) + " of " +
                           std::to_string(in) + " (scale " + std::to_string(scale) +
                           "): the output dims do not follow from the scale");
  auto clampi = [&](int64_t i) { return std::clamp<int64_t>(i, 0, in - 1); };
  if (cfg.mode == 0) {
    double r;
    const double f = std::floor(x);
    if (cfg.nearest == "floor") {
      r = f;
    } else if (cfg.nearest == "ceil") {
      r = std::ceil(x);
    } else if (x - f == 0.5) {
      r = cfg.nearest == "round_prefer_ceil" ? f + 1 : f;
    } else {
      r = std::round(x);
    }
    return std::vector<Tap>{{clampi(static_cast<int64_t>(r)), 1.0}};
  }
  const int64_t i0 = static_cast<int64_t>(std::floor(x));
  const double t = x - static_cast<double>(i0);
  const double A = cfg.a;
  auto cubic = [A](double d) {  // Keys' kernel
    d = std::fabs(d);
    if (d <= 1) return ((A + 2) * d - (A + 3)) * d * d + 1;
    if (d < 2) return ((A * d - 5 * A) * d + 8 * A) * d - 4 * A;
    return 0.0;
  };
  std::vector<Tap> taps;
  if (cfg.antialias && scale < 1) {
    // The filter stretched by 1 / scale (support 1 / scale for linear, 2 / scale for cubic),
    // its weights normalised to sum 1.
    const double support = cfg.mode == 1 ? 1.0 : 2.0;
    // At most the taps the CUDA tactic plans from the dims (in / out is about 1 / scale).
    const double ffirst = std::floor(-support / scale) + 1;
    const double planned = 2 * std::ceil(support * static_cast<double>(in) /
                                         static_cast<double>(std::max<int64_t>(out, 1))) +
                           4;
    if (!(2 - 2 * ffirst <= planned))
      return Status::invalid("scale " + std::to_string(scale) + " gives an antialias filter of " +
                             std::to_string(2 - 2 * ffirst) + " taps where an axis of " +
                             std::to_string(in) + " resized to " + std::to_string(out) +
                             " has at most " + std::to_string(planned));
    const int64_t first = static_cast<int64_t>(ffirst);
    const int64_t last = 2 - first;  // exclusive
    double sum = 0;
    for (int64_t i = first; i < last; ++i) {
      const double d = (static_cast<double>(i) - t) * scale;
      const double wgt = cfg.mode == 1 ? std::max(0.0, 1 - std::fabs(d)) : cubic(d);
      taps.push_back({i0 + i, wgt});
      sum += wgt;
    }
    for (auto& tp : taps) tp.weight /= sum;
  } else if (cfg.mode == 1) {
    return std::vector<Tap>{{clampi(i0), 1 - t}, {clampi(i0 + 1), t}};
  } else {
    taps = {{i0 - 1, cubic(t + 1)}, {i0, cubic(t)}, {i0 + 1, cubic(1 - t)}, {i0 + 2, cubic(2 - t)}};
  }
  if (cfg.exclude) {
    double sum = 0;
    for (auto& tp : taps) {
      if (tp.index < 0 || tp.index >= in) tp.weight = 0;
      sum += tp.weight;
    }
    for (auto& tp : taps) tp.weight = sum != 0 ? tp.weight / sum : 0;
  }
  for (auto& tp : taps) tp.index = clampi(tp.index);
  return taps;
}

}  // namespace

OPFORGE_OP(Resize, "ai.onnx::Resize")
    .doc("Resizes by nearest, linear or cubic interpolation.")
    .input("X")
    .valueInput("roi", true, "tf_crop_and_resize region (starts then ends); opset 10: the scales")
    .valueInput("scales", true, "FP32 per resized axis")
    .valueInput("sizes", true, "INT64 per resized axis")
    .output("Y")
    .attr<std::string>("mode", std::string("nearest"),
                       "nearest | linear | cubic (bilinear/bicubic accepted)")
    .attr<std::string>("coordinate_transformation_mode", std::string("half_pixel"),
                       "default half_pixel")
    .attr<std::string>("nearest_mode", std::string("round_prefer_floor"),
                       "default round_prefer_floor")
    .attr<double>("cubic_coeff_a", -0.75)
    .attr<int64_t>("exclude_outside", int64_t{0})
    .attr<double>("extrapolation_value", 0.0)
    .attr<int64_t>("antialias", int64_t{0},
                   "1: when downsampling, linear/cubic filters widen by 1 / scale")
    .optionalAttr<std::vector<int64_t>>("axes")
    .attr<std::string>("keep_aspect_ratio_policy", std::string("stretch"), "default stretch")
    .with(onnxOpsetAttr)
    .check([](const AttrMap& a) -> Status {
      const auto m = a.get<std::string>("mode");
      if (m != "nearest" && m != "linear" && m != "cubic")
        return Status::invalid("attribute 'mode' must be nearest, linear or cubic, got '" + m +
                               "'");
      const auto t = a.get<std::string>("coordinate_transformation_mode");
      static const char* kModes[] = {
          "half_pixel", "half_pixel_symmetric", "pytorch_half_pixel", "align_corners",
          "asymmetric", "tf_half_pixel_for_nn", "tf_crop_and_resize"};
      bool ok = false;
      for (const char* k : kModes) ok = ok || t == k;
      if (!ok)
        return Status::invalid("attribute 'coordinate_transformation_mode' = '" + t +
                               "' is not an ONNX mode");
      const auto n = a.get<std::string>("nearest_mode");
      if (n != "round_prefer_floor" && n != "round_prefer_ceil" && n != "floor" && n != "ceil")
        return Status::invalid("attribute 'nearest_mode' = '" + n + "' is not an ONNX mode");
      const auto p = a.get<std::string>("keep_aspect_ratio_policy");
      if (p != "stretch" && p != "not_larger" && p != "not_smaller")
        return Status::invalid("attribute 'keep_aspect_ratio_policy' = '" + p +
                               "' is not an ONNX policy");
      return Status::ok();
    })
    .shape([](ShapeContext& c) -> Result<SymDesc> {
      SymDesc x = c.input(0);
      OPFORGE_RETURN_IF_ERROR(checkType(c, "input 'X'", x.dtype, kFloats | kSigned | kUnsigned));
      const Cfg cfg = cfgOf(c.attrs());
      const int r = x.rank();
      const int si = cfg.old ? 1 : 2;
      if (c.attrs().has("axes"))
        for (int64_t a : c.attr<std::vector<int64_t>>("axes"))
          OPFORGE_RETURN_IF_ERROR(normAxis(c, a, r, "axes value").status());
      OPFORGE_ASSIGN_OR_RETURN(const auto ax, resizedAxes(c.attrs(), r));
      const bool has_scales = c.hasInput(si) && !isConstEq(product(c.input(si).dims), 0);
      const bool has_sizes = !cfg.old && c.hasInput(3) && !isConstEq(product(c.input(3).dims), 0);
      if (has_scales == has_sizes)
        return c.error("exactly one of 'scales' and 'sizes' must be given");
      SymDesc y = x.like();
      if (has_scales) {
        OPFORGE_ASSIGN_OR_RETURN(auto scales, needNumbers(c, si, "scales"));
        if (scales.size() != ax.size())
          return c.error("'scales' has " + std::to_string(scales.size()) + " values for " +
                         std::to_string(ax.size()) + " axes");
        for (size_t i = 0; i < ax.size(); ++i) {
          if (!(scales[i] > 0))
            return c.error("'scales' must be positive, got " + std::to_string(scales[i]));
          double s = scales[i];
          if (cfg.ctm == "tf_crop_and_resize" && c.hasInput(1)) {
            OPFORGE_ASSIGN_OR_RETURN(auto roi, needNumbers(c, 1, "roi"));
            const size_t n = roi.size() / 2;
            const size_t j = n == ax.size() ? i : static_cast<size_t>(ax[i]);
            if (j < n) s *= roi[n + j] - roi[j];
          }
          auto d = resizeScaledDim(x.dim(ax[i]), s);
          if (!d) return c.error(d.status().message() + " (axis " + std::to_string(ax[i]) + ")");
          y.dims[ax[i]] = *d;
        }
      } else {
        if (c.input(3).dtype != DataType::kInt64) return c.error("'sizes' must be INT64");
        OPFORGE_ASSIGN_OR_RETURN(auto sizes, needValue(c, 3, "sizes"));
        if (sizes.size() != ax.size())
          return c.error("'sizes' has " + std::to_string(sizes.size()) + " values for " +
                         std::to_string(ax.size()) + " axes");
        if (cfg.policy == "stretch") {
          for (size_t i = 0; i < ax.size(); ++i) y.dims[ax[i]] = sizes[i];
        } else {
          std::vector<int64_t> in(r), sz;
          for (int a = 0; a < r; ++a) {
            if (!x.dim(a).isConst())
              return c.error("keep_aspect_ratio_policy needs static input dimensions");
            in[a] = x.dim(a).constValue();
          }
          for (const auto& s : sizes) {
            if (!s.isConst()) return c.error("keep_aspect_ratio_policy needs constant sizes");
            sz.push_back(s.constValue());
          }
          const double s = aspectScale(cfg, in, sz, ax);
          for (int a : ax)
            y.dims[a] = static_cast<int64_t>(std::floor(s * static_cast<double>(in[a]) + 0.5));
        }
      }
      OPFORGE_RETURN_IF_ERROR(checkElementCount(c, y.dims, "output"));
      return y;
    })
    .cpu([](KernelContext& k, std::span<const Tensor> in, std::span<const Tensor> out) {
      return resizeReference(k.attrs(), in, out);
    });

Status resizeReference(const AttrMap& at, std::span<const Tensor> in, std::span<const Tensor> out) {
  const Tensor &x = in[0], &y = out[0];
  const Cfg cfg = cfgOf(at);
  const int r = x.desc.rank();
  OPFORGE_ASSIGN_OR_RETURN(const auto ax, resizedAxes(at, r));
  const int si = cfg.old ? 1 : 2;
  std::vector<double> scale(r, 1.0), roi0(r, 0.0), roi1(r, 1.0);
  const bool has_scales = hasIn(in, si) && in[si].numel() > 0;
  if (has_scales) {
    const auto s = readDoubles(in[si]);
    if (s.size() != ax.size())
      return Status::invalid("input 'scales' has " + std::to_string(s.size()) + " values for " +
                             std::to_string(ax.size()) + " axes");
    for (size_t i = 0; i < ax.size(); ++i) scale[ax[i]] = s[i];
  } else {
    const auto sz = readInts(in[3]);
    if (sz.size() != ax.size())
      return Status::invalid("input 'sizes' has " + std::to_string(sz.size()) + " values for " +
                             std::to_string(ax.size()) + " axes");
    if (cfg.policy == "stretch") {
      for (int a : ax)
        scale[a] = static_cast<double>(y.desc.dims[a]) / static_cast<double>(x.desc.dims[a]);
    } else {
      const double s = aspectScale(cfg, x.desc.dims, sz, ax);
      for (int a : ax) scale[a] = s;
    }
  }
  if (!cfg.old && cfg.ctm == "tf_crop_and_resize" && hasIn(in, 1)) {
    const auto roi = readDoubles(in[1]);
    const size_t n = roi.size() / 2;
    if (n != ax.size() && n != static_cast<size_t>(r))
      return Status::invalid("input 'roi' has " + std::to_string(roi.size()) + " values for " +
                             std::to_string(ax.size()) + " axes of rank " + std::to_string(r));
    for (size_t i = 0; i < n; ++i) {
      const int a = n == ax.size() ? ax[i] : static_cast<int>(i);
      roi0[a] = roi[i];
      roi1[a] = roi[n + i];
    }
  }
  if (y.numel() == 0) return Status::ok();  // before the tables: an empty axis beside a huge one
  // The run-time values (scales, roi) and the dims the kernel is given must give finite source
  // coordinates: a loaded plan's values are data, not a promise of the build's checks.
  for (int a : ax) {
    OPFORGE_RETURN_IF_ERROR(checkScale(scale[a]).withContext("axis " + std::to_string(a)));
    if (x.desc.dims[a] == 0)
      return Status::invalid("axis " + std::to_string(a) + " of size 0 can not be resized to " +
                             std::to_string(y.desc.dims[a]));
    if (!std::isfinite(roi0[a]) || !std::isfinite(roi1[a]))
      return Status::invalid("roi of axis " + std::to_string(a) + " must be finite");
  }
  // Per axis and output coordinate: the taps (input offset, weight); none = extrapolate. One flat
  // list per axis (taps of coordinate o at [start[o], start[o + 1])), not a list per coordinate.
  struct Axis {
    std::vector<int64_t> start{0}, off;
    std::vector<double> w;
  };
  struct Row {
    int64_t n;
    const int64_t* off;
    const double* w;
  };
  const auto xs = stridesOf(x.desc.dims);
  std::vector<Axis> table(r);
  for (int a = 0; a < r; ++a) {
    const bool resized = std::find(ax.begin(), ax.end(), a) != ax.end();
    Axis& t = table[a];
    t.start.reserve(static_cast<size_t>(y.desc.dims[a]) + 1);
    for (int64_t o = 0; o < y.desc.dims[a]; ++o) {
      std::vector<Tap> taps{{o, 1.0}};
      if (resized) {
        auto r = tapsOf(cfg, o, x.desc.dims[a], y.desc.dims[a], scale[a], roi0[a], roi1[a]);
        if (!r.isOk()) return r.status().withContext("axis " + std::to_string(a));
        taps = std::move(*r);
      }
      const size_t before = t.off.size();
      for (const auto& tp : taps)
        if (tp.weight != 0 || taps.size() == 1) {
          t.off.push_back(tp.index * xs[a]);
          t.w.push_back(tp.weight);
        }
      if (!taps.empty() && t.off.size() == before) t.off.push_back(0), t.w.push_back(0);
      t.start.push_back(static_cast<int64_t>(t.off.size()));
    }
  }
  auto rowOf = [&](int a, int64_t o) {
    const Axis& t = table[a];
    return Row{t.start[o + 1] - t.start[o], t.off.data() + t.start[o], t.w.data() + t.start[o]};
  };
  return visitTypes<kFloats | kSigned | kUnsigned>(x.desc.dtype, "Resize", [&](auto num) -> Status {
    using N = decltype(num);
    using C = typename N::C;
    const auto* px = ptrOf<N>(x);
    auto* py = mutPtr<N>(y);
    auto store = [&](int64_t at, double v) {
      if constexpr (std::is_integral_v<C>) v = std::nearbyint(v);
      py[at] = N::store(static_cast<C>(v));
    };
    if (r == 0) {
      store(0, static_cast<double>(N::load(px[0])));
      return Status::ok();
    }
    // Rows along the last axis; the taps of the other axes combine into one (offset,
    // weight) list.
    const int64_t width = y.desc.dims[r - 1], rows = y.numel() / width;
    std::vector<int64_t> idx(r - 1, 0);
    std::vector<std::pair<int64_t, double>> outer, next;
    for (int64_t q = 0; q < rows; ++q) {
      outer.assign(1, {0, 1.0});
      bool outside = false;
      for (int a = 0; a + 1 < r; ++a) {
        const Row t = rowOf(a, idx[a]);
        outside = outside || t.n == 0;
        next.clear();
        for (const auto& [o, w] : outer)
          for (int k = 0; k < t.n; ++k) next.emplace_back(o + t.off[k], w * t.w[k]);
        outer.swap(next);
      }
      for (int64_t i = 0; i < width; ++i) {
        const Row t = rowOf(r - 1, i);
        double v = cfg.extrap;
        if (!outside && t.n > 0) {
          v = 0;
          for (const auto& [o, w] : outer)
            for (int k = 0; k < t.n; ++k)
              v += w * t.w[k] * static_cast<double>(N::load(px[o + t.off[k]]));
        }
        store(q * width + i, v);
      }
      for (int a = r - 2; a >= 0; --a) {
        if (++idx[a] < y.desc.dims[a]) break;
        idx[a] = 0;
      }
    }
    return Status::ok();
  });
}
}  // namespace opforge::ops
