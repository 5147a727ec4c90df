// ONNX RoiAlign (opset 10, 16, 22): Y[r, c] is the [output_height, output_width] grid of bins of
// region rois[r] = (x1, y1, x2, y2) (times spatial_scale) over image batch_indices[r] of X; each
// bin samples sampling_ratio x sampling_ratio points (0: ceil(region size / bins) per axis) by
// bilinear interpolation and takes their mean (mode avg) or maximum (mode max).
//
// As the ONNX reference (and onnxruntime): coordinate_transformation_mode half_pixel shifts the
// region by -0.5 pixel, output_half_pixel (opset 10's only behaviour, the default before opset 16)
// does not and makes regions at least 1x1; a sample more than one pixel outside the image counts
// as 0, one within a pixel of it is clamped to the edge; mode max takes the maximum of the four
// *weighted* corner values of every sample (w1 * v1, ..., w4 * v4), not of the interpolated value.
// Coordinates, weights and sums in double; batch indices outside [0, N) are an error.
// Limits (no shape bounds them): sampling_ratio is at most 1024, and a bin takes at most 2^20
// samples, each axis at most 2^20 (an adaptive count from a huge or NaN region is an error naming
// the region; the CUDA tactic reports it through the device error record, kind
// kDeviceErrorLimit, and writes 0; roialign.h).
#include <algorithm>
#include <cmath>
#include <cstdio>

#include "../common/util.h"
#include "roialign.h"

namespace opforge::ops {
namespace {

bool halfPixel(const AttrMap& a) {
  if (a.has("coordinate_transformation_mode"))
    return a.get<std::string>("coordinate_transformation_mode") == "half_pixel";
  return opsetOf(a) >= 16;
}

// One sample: four flat positions in the image plane and their weights (all 0 outside).
struct Sample {
  int64_t pos[4] = {0, 0, 0, 0};
  double w[4] = {0, 0, 0, 0};
};

Sample sampleAt(double y, double x, int64_t h, int64_t w) {
  Sample s;
  if (y < -1.0 || y > static_cast<double>(h) || x < -1.0 || x > static_cast<double>(w)) return s;
  y = std::max(y, 0.0);
  x = std::max(x, 0.0);
  int64_t y0 = static_cast<int64_t>(y), x0 = static_cast<int64_t>(x), y1, x1;
  if (y0 >= h - 1) {
    y0 = y1 = h - 1;
    y = static_cast<double>(y0);
  } else {
    y1 = y0 + 1;
  }
  if (x0 >= w - 1) {
    x0 = x1 = w - 1;
    x = static_cast<double>(x0);
  } else {
    x1 = x0 + 1;
  }
  const double ly = y - static_cast<double>(y0), lx = x - static_cast<double>(x0);
  const double hy = 1.0 - ly, hx = 1.0 - lx;
  s.pos[0] = y0 * w + x0;
  s.pos[1] = y0 * w + x1;
  s.pos[2] = y1 * w + x0;
  s.pos[3] = y1 * w + x1;
  s.w[0] = hy * hx;
  s.w[1] = hy * lx;
  s.w[2] = ly * hx;
  s.w[3] = ly * lx;
  return s;
}

}  // namespace

OPFORGE_OP(RoiAlign, "ai.onnx::RoiAlign")
    .doc("Region of interest align: bilinear-sampled pooling of image regions.")
    .input("X", "[N, C, H, W]")
    .input("rois", "[num_rois, 4]: x1, y1, x2, y2 in the image's coordinates / spatial_scale")
    .input("batch_indices", "INT64 [num_rois], each in [0, N)")
    .output("Y", "[num_rois, C, output_height, output_width]")
    .attr<std::string>("mode", std::string("avg"), "avg or max")
    .attr<int64_t>("output_height", int64_t{1})
    .attr<int64_t>("output_width", int64_t{1})
    .attr<int64_t>("sampling_ratio", int64_t{0}, "samples per bin and axis; 0: adaptive")
    .attr<double>("spatial_scale", 1.0)
    .optionalAttr<std::string>("coordinate_transformation_mode",
                               "half_pixel or output_half_pixel (opset 16); absent: half_pixel "
                               "from opset 16, output_half_pixel before")
    .with(onnxOpsetAttr)
    .check([](const AttrMap& a) -> Status {
      const auto mode = a.get<std::string>("mode");
      if (mode != "avg" && mode != "max")
        return Status::invalid("mode must be avg or max, got '" + mode + "'");
      for (const char* n : {"output_height", "output_width"})
        if (a.get<int64_t>(n) < 1)
          return Status::invalid(std::string(n) + " must be at least 1, got " +
                                 std::to_string(a.get<int64_t>(n)));
      // A loop count that no shape bounds: at most kMaxSamplingRatio (a plan edited to 2^40 would
      // otherwise load and loop for ever).
      if (a.get<int64_t>("sampling_ratio") < 0 ||
          a.get<int64_t>("sampling_ratio") > kMaxSamplingRatio)
        return Status::invalid("sampling_ratio must be in [0, 1024], got " +
                               std::to_string(a.get<int64_t>("sampling_ratio")));
      if (!std::isfinite(a.get<double>("spatial_scale")))
        return Status::invalid("spatial_scale must be finite");
      if (a.has("coordinate_transformation_mode")) {
        const auto m = a.get<std::string>("coordinate_transformation_mode");
        if (m != "half_pixel" && m != "output_half_pixel")
          return Status::invalid(
              "coordinate_transformation_mode must be half_pixel or output_half_pixel, got '" + m +
              "'");
      }
      return Status::ok();
    })
    .shape([](ShapeContext& c) -> Result<SymDesc> {
      SymDesc x = c.input(0), rois = c.input(1), bi = c.input(2);
      OPFORGE_RETURN_IF_ERROR(checkType(c, "input 'X'", x.dtype, kFloats));
      if (rois.dtype != x.dtype)
        return c.error("input 'rois' must have X's type " + dtypeName(x.dtype) + ", got " +
                       dtypeName(rois.dtype));
      if (bi.dtype != DataType::kInt64)
        return c.error("input 'batch_indices' must be INT64, got " + dtypeName(bi.dtype));
      if (x.rank() != 4)
        return c.error("input 'X' must have rank 4 [N, C, H, W], got " + toString(x.dims));
      if (rois.rank() != 2)
        return c.error("input 'rois' must have rank 2 [num_rois, 4], got " + toString(rois.dims));
      if (bi.rank() != 1)
        return c.error("input 'batch_indices' must have rank 1 [num_rois], got " +
                       toString(bi.dims));
      OPFORGE_RETURN_IF_ERROR(
          requireEq(c, rois.dim(1), DimExpr(4), "input 'rois' must have 4 coordinates per region"));
      OPFORGE_RETURN_IF_ERROR(requireEq(
          c, bi.dim(0), rois.dim(0), "'batch_indices' must have one entry per region of 'rois'"));
      for (int a = 2; a < 4; ++a) {
        if (isConstEq(x.dim(a), 0))
          return c.error("input 'X' must have non-empty images, got " + toString(x.dims));
        if (!x.dim(a).isConst())
          c.require(DimExpr(1), DimAssertion::Op::kLe, x.dim(a),
                    "input 'X' must have non-empty images (H, W >= 1)");
      }
      return SymDesc::make(x.dtype, {rois.dim(0), x.dim(1), c.attr<int64_t>("output_height"),
                                     c.attr<int64_t>("output_width")});
    })
    .cpu([](KernelContext& k, std::span<const Tensor> in, std::span<const Tensor> out) -> Status {
      const Tensor& x = in[0];
      const int64_t n = x.desc.dims[0], ch = x.desc.dims[1], h = x.desc.dims[2], w = x.desc.dims[3];
      const int64_t nr = in[1].desc.dims[0], oh = k.attr<int64_t>("output_height"),
                    ow = k.attr<int64_t>("output_width");
      const int64_t ratio = k.attr<int64_t>("sampling_ratio");
      const double scale = k.attr<double>("spatial_scale");
      const bool half = halfPixel(k.attrs()), avg = k.attr<std::string>("mode") == "avg";
      const auto rois = readDoubles(in[1]);
      const auto* bi = static_cast<const int64_t*>(in[2].data);
      for (int64_t r = 0; r < nr; ++r)
        if (bi[r] < 0 || bi[r] >= n)
          return Status::outOfRange("input 'batch_indices' holds " + std::to_string(bi[r]) +
                                    " at position " + std::to_string(r) + ", outside [0, " +
                                    std::to_string(n - 1) + "] (X has " + std::to_string(n) +
                                    " images)");
      return visitTypes<kFloats>(x.desc.dtype, "RoiAlign", [&](auto num) -> Status {
        using N = decltype(num);
        using C = typename N::C;
        const auto* px = ptrOf<N>(x);
        auto* py = mutPtr<N>(out[0]);
        std::vector<Sample> samples;
        for (int64_t r = 0; r < nr; ++r) {
          const double off = half ? 0.5 : 0.0;
          const double x0 = rois[4 * r] * scale - off, y0 = rois[4 * r + 1] * scale - off;
          const double x1 = rois[4 * r + 2] * scale - off, y1 = rois[4 * r + 3] * scale - off;
          double rw = x1 - x0, rh = y1 - y0;
          if (!half) {  // regions of at least 1x1
            rw = std::max(rw, 1.0);
            rh = std::max(rh, 1.0);
          }
          const double bh = rh / static_cast<double>(oh), bw = rw / static_cast<double>(ow);
          // Samples per bin and axis, in double first: an adaptive count comes from the data
          // (a region of 1e30 pixels, or NaN) and must be bounded before it is a loop count.
          if (std::isnan(x0) || std::isnan(y0) || std::isnan(bh) || std::isnan(bw))
            return Status::invalid("region " + std::to_string(r) +
                                   " of input 'rois' has a NaN coordinate or size");
          const double gh_d = roiAxisSamples(ratio, bh), gw_d = roiAxisSamples(ratio, bw);
          if (!roiGridFits(gh_d, gw_d)) {
            auto g = [](double v) {
              char b[32];
              std::snprintf(b, sizeof b, "%g", v);
              return std::string(b);
            };
            return Status::outOfRange("region " + std::to_string(r) + " of input 'rois' (" +
                                      g(rois[4 * r]) + ", " + g(rois[4 * r + 1]) + ", " +
                                      g(rois[4 * r + 2]) + ", " + g(rois[4 * r + 3]) + ") needs " +
                                      g(gh_d) + " x " + g(gw_d) +
                                      " samples per bin; at most 2^20 (1024 x 1024) are taken");
          }
          const auto gh = static_cast<int64_t>(gh_d), gw = static_cast<int64_t>(gw_d);
          const double count = static_cast<double>(std::max<int64_t>(gh * gw, 1));
          for (int64_t i = 0; i < oh; ++i)
            for (int64_t j = 0; j < ow; ++j) {
              // The samples of bin (i, j), shared by the channels: sample (a, b).
              samples.assign(static_cast<size_t>(gh * gw), Sample{});
              size_t s = 0;
              for (int64_t a = 0; a < gh; ++a) {
                const double yy = y0 + static_cast<double>(i) * bh +
                                  (static_cast<double>(a) + 0.5) * bh / static_cast<double>(gh);
                for (int64_t b = 0; b < gw; ++b) {
                  const double xx = x0 + static_cast<double>(j) * bw +
                                    (static_cast<double>(b) + 0.5) * bw / static_cast<double>(gw);
                  samples[s++] = sampleAt(yy, xx, h, w);
                }
              }
              for (int64_t c = 0; c < ch; ++c) {
                const auto* plane = px + (bi[r] * ch + c) * h * w;
                double acc = 0;
                bool first = true;
                for (const Sample& sm : samples) {
                  double v[4];
                  for (int e = 0; e < 4; ++e)
                    v[e] = sm.w[e] * static_cast<double>(N::load(plane[sm.pos[e]]));
                  if (avg) {
                    acc += v[0] + v[1] + v[2] + v[3];
                  } else {
                    const double m = std::max(std::max(v[0], v[1]), std::max(v[2], v[3]));
                    acc = first ? m : std::max(acc, m);
                    first = false;
                  }
                }
                if (avg) acc /= count;
                py[((r * ch + c) * oh + i) * ow + j] = N::store(static_cast<C>(acc));
              }
            }
        }
        return Status::ok();
      });
    });
}  // namespace opforge::ops
