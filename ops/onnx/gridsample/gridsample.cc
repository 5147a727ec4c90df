// ONNX GridSample (2-D): Y[n, c, h, w] = X[n, c] sampled at grid[n, h, w] = (x, y) in [-1, 1].
// Unnormalised: align_corners ? (g + 1) / 2 * (size - 1) : ((g + 1) * size - 1) / 2.
// mode: bilinear (opset 16 name) / linear (opset 20), nearest (half to even), bicubic / cubic
// (Keys, A = -0.75, 4x4 taps). padding_mode: zeros (taps outside read 0), border (coordinates
// clamped to the edge), reflection (coordinates mirrored at the borders: [-0.5, size - 0.5], or
// [0, size - 1] with align_corners). Volumetric (5-D) input is not supported.
#include <algorithm>
#include <cmath>

#include "../common/util.h"

namespace opforge::ops {
namespace {

int modeOf(const std::string& m) {
  if (m == "bilinear" || m == "linear") return 1;
  if (m == "nearest") return 0;
  if (m == "bicubic" || m == "cubic") return 2;
  return -1;
}

// Mirrors x into [lo, hi].
double reflect(double x, double lo, double hi) {
  const double span = hi - lo;
  if (span <= 0) return lo;
  double d = std::fabs(x - lo);
  const double flips = std::floor(d / span);
  const double rest = d - flips * span;
  return static_cast<int64_t>(flips) % 2 == 0 ? lo + rest : hi - rest;
}

}  // namespace

OPFORGE_OP(GridSample, "ai.onnx::GridSample")
    .doc("Samples an image at grid coordinates (2-D).")
    .input("X", "(N, C, H, W)")
    .input("grid", "(N, H_out, W_out, 2), (x, y) in [-1, 1]")
    .output("Y")
    .attr<int64_t>("align_corners", int64_t{0})
    .attr<std::string>("mode", std::string("linear"), "linear | nearest | cubic (opset 16: bilinear | bicubic)")
    .attr<std::string>("padding_mode", std::string("zeros"), "zeros | border | reflection")
    .check([](const AttrMap& a) -> Status {
      if (modeOf(a.get<std::string>("mode")) < 0)
        return Status::invalid("attribute 'mode' must be linear, nearest or cubic (bilinear, bicubic), got '" + a.get<std::string>("mode") + "'");
      const auto p = a.get<std::string>("padding_mode");
      if (p != "zeros" && p != "border" && p != "reflection")
        return Status::invalid("attribute 'padding_mode' must be zeros, border or reflection, got '" + p + "'");
      return Status::ok();
    })
    .shape([](ShapeContext& c) -> Result<SymDesc> {
      SymDesc x = c.input(0), g = c.input(1);
      OPFORGE_RETURN_IF_ERROR(checkType(c, "input 'X'", x.dtype, kFloats));
      if (g.dtype != x.dtype) return c.error("input 'grid' has type " + dtypeName(g.dtype) + "; X has " + dtypeName(x.dtype));
      if (x.rank() == 5)
        return Status::unsupported("node '" + c.nodeName() + "' (" + c.opKey() + "): volumetric (5-D) GridSample is not supported; opforge implements the 2-D form");
      if (x.rank() != 4) return c.error("input 'X' must be 4-D (N, C, H, W), got " + toString(x.dims));
      if (g.rank() != 4 || !isConstEq(g.dim(3), 2)) return c.error("input 'grid' must be (N, H_out, W_out, 2), got " + toString(g.dims));
      OPFORGE_RETURN_IF_ERROR(requireEq(c, g.dim(0), x.dim(0), "grid and X must have the same batch size"));
      return SymDesc::make(x.dtype, {x.dim(0), x.dim(1), g.dim(1), g.dim(2)});
    })
    .cpu([](KernelContext& k, std::span<const Tensor> in, std::span<const Tensor> out) -> Status {
      const Tensor &x = in[0], &g = in[1], &y = out[0];
      const int mode = modeOf(k.attr<std::string>("mode"));
      const std::string pad = k.attr<std::string>("padding_mode");
      const bool ac = k.attr<int64_t>("align_corners") != 0;
      const int64_t n = x.desc.dims[0], ch = x.desc.dims[1], h = x.desc.dims[2], w = x.desc.dims[3];
      const int64_t ho = g.desc.dims[1], wo = g.desc.dims[2];
      return visitTypes<kFloats>(x.desc.dtype, "GridSample", [&](auto num) -> Status {
        using N = decltype(num);
        using C = typename N::C;
        const auto* px = ptrOf<N>(x);
        const auto* pg = ptrOf<N>(g);
        auto* py = mutPtr<N>(y);
        auto unnorm = [&](double v, int64_t size) { return ac ? (v + 1) / 2 * static_cast<double>(size - 1) : ((v + 1) * static_cast<double>(size) - 1) / 2; };
        auto padCoord = [&](double v, int64_t size) {
          if (pad == "border") return std::clamp(v, 0.0, static_cast<double>(size - 1));
          if (pad == "reflection") {
            v = ac ? reflect(v, 0, static_cast<double>(size - 1)) : reflect(v, -0.5, static_cast<double>(size) - 0.5);
            return std::clamp(v, 0.0, static_cast<double>(size - 1));
          }
          return v;
        };
        // One pixel; zeros padding reads 0 outside, the other modes clamp / mirror the index.
        auto pixel = [&](const typename N::S* plane, int64_t yy, int64_t xx) -> double {
          if (pad == "zeros") {
            if (yy < 0 || yy >= h || xx < 0 || xx >= w) return 0.0;
          } else if (pad == "border") {
            yy = std::clamp<int64_t>(yy, 0, h - 1);
            xx = std::clamp<int64_t>(xx, 0, w - 1);
          } else {
            yy = static_cast<int64_t>(std::lround(padCoord(static_cast<double>(yy), h)));
            xx = static_cast<int64_t>(std::lround(padCoord(static_cast<double>(xx), w)));
          }
          return static_cast<double>(N::load(plane[yy * w + xx]));
        };
        auto cubic = [](double t, double* c4) {
          const double A = -0.75;
          auto far = [A](double d) { return ((A * d - 5 * A) * d + 8 * A) * d - 4 * A; };
          auto near = [A](double d) { return ((A + 2) * d - (A + 3)) * d * d + 1; };
          c4[0] = far(t + 1);
          c4[1] = near(t);
          c4[2] = near(1 - t);
          c4[3] = far(2 - t);
        };
        for (int64_t b = 0; b < n; ++b)
          for (int64_t i = 0; i < ho * wo; ++i) {
            const auto* gp = pg + (b * ho * wo + i) * 2;
            double gx = unnorm(static_cast<double>(N::load(gp[0])), w), gy = unnorm(static_cast<double>(N::load(gp[1])), h);
            if (mode != 2) {
              gx = padCoord(gx, w);
              gy = padCoord(gy, h);
            }
            for (int64_t c = 0; c < ch; ++c) {
              const auto* plane = px + (b * ch + c) * h * w;
              double v = 0;
              if (mode == 0) {
                v = pixel(plane, static_cast<int64_t>(std::nearbyint(gy)), static_cast<int64_t>(std::nearbyint(gx)));
              } else if (mode == 1) {
                const int64_t x0 = static_cast<int64_t>(std::floor(gx)), y0 = static_cast<int64_t>(std::floor(gy));
                const double tx = gx - static_cast<double>(x0), ty = gy - static_cast<double>(y0);
                v = (1 - ty) * ((1 - tx) * pixel(plane, y0, x0) + tx * pixel(plane, y0, x0 + 1)) +
                    ty * ((1 - tx) * pixel(plane, y0 + 1, x0) + tx * pixel(plane, y0 + 1, x0 + 1));
              } else {
                const int64_t x0 = static_cast<int64_t>(std::floor(gx)), y0 = static_cast<int64_t>(std::floor(gy));
                double cx[4], cy[4];
                cubic(gx - static_cast<double>(x0), cx);
                cubic(gy - static_cast<double>(y0), cy);
                for (int dy = 0; dy < 4; ++dy)
                  for (int dx = 0; dx < 4; ++dx) v += cy[dy] * cx[dx] * pixel(plane, y0 - 1 + dy, x0 - 1 + dx);
              }
              py[(b * ch + c) * ho * wo + i] = N::store(static_cast<C>(v));
            }
          }
        return Status::ok();
      });
    });
}  // namespace opforge::ops
