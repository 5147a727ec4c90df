// ONNX GridSample: Y[n, c, h, w] = X[n, c] sampled at grid[n, h, w] = (x, y) in [-1, 1].
// Unnormalised: align_corners ? (g + 1) / 2 * (size - 1) : ((g + 1) * size - 1) / 2.
// mode: bilinear (opset 16 name) / linear (opset 20), nearest (half to even), bicubic / cubic
// (Keys, A = -0.75, 4x4 taps). padding_mode: zeros (taps outside read 0), border (coordinates
// clamped to the edge), reflection (coordinates mirrored at the borders: [-0.5, size - 0.5], or
// [0, size - 1] with align_corners). 5-D input (N, C, D, H, W) with a (x, y, z) grid is sampled
// the same way (trilinear / nearest; cubic is defined for 2-D only).
#include <algorithm>
#include <cmath>
#include <limits>

#include "../common/util.h"
#include "gridsample_reflect.h"

namespace opforge::ops {
namespace {

int modeOf(const std::string& m) {
  if (m == "bilinear" || m == "linear") return 1;
  if (m == "nearest") return 0;
  if (m == "bicubic" || m == "cubic") return 2;
  return -1;
}

// Bicubic reflection's coordinate bound: 2^40 pixels, far past any image, well inside int64.
constexpr double kFarTap = 1099511627776.0;

using gridsample::reflect;  // x mirrored into [lo, hi] (gridsample_reflect.h)

}  // namespace

OPFORGE_OP(GridSample, "ai.onnx::GridSample")
    .doc("Samples an image (2-D or 3-D) at grid coordinates.")
    .input("X", "(N, C, H, W) or (N, C, D, H, W)")
    .input("grid", "(N, H_out, W_out, 2) or (N, D_out, H_out, W_out, 3), coordinates in [-1, 1]")
    .output("Y")
    .attr<int64_t>("align_corners", int64_t{0})
    .attr<std::string>("mode", std::string("linear"),
                       "linear | nearest | cubic (opset 16: bilinear | bicubic)")
    .attr<std::string>("padding_mode", std::string("zeros"), "zeros | border | reflection")
    .check([](const AttrMap& a) -> Status {
      if (modeOf(a.get<std::string>("mode")) < 0)
        return Status::invalid(
            "attribute 'mode' must be linear, nearest or cubic (bilinear, bicubic), got '" +
            a.get<std::string>("mode") + "'");
      const auto p = a.get<std::string>("padding_mode");
      if (p != "zeros" && p != "border" && p != "reflection")
        return Status::invalid(
            "attribute 'padding_mode' must be zeros, border or reflection, got '" + p + "'");
      return Status::ok();
    })
    .shape([](ShapeContext& c) -> Result<SymDesc> {
      SymDesc x = c.input(0), g = c.input(1);
      OPFORGE_RETURN_IF_ERROR(checkType(c, "input 'X'", x.dtype, kFloats));
      if (g.dtype != x.dtype)
        return c.error("input 'grid' has type " + dtypeName(g.dtype) + "; X has " +
                       dtypeName(x.dtype));
      if (x.rank() != 4 && x.rank() != 5)
        return c.error("input 'X' must be 4-D (N, C, H, W) or 5-D (N, C, D, H, W), got " +
                       toString(x.dims));
      const int nd = x.rank() - 2;
      if (g.rank() != x.rank() || !isConstEq(g.dim(-1), nd))
        return c.error("input 'grid' must be (N, " +
                       std::string(nd == 2 ? "H_out, W_out, 2" : "D_out, H_out, W_out, 3") +
                       "), got " + toString(g.dims));
      if (nd == 3 && modeOf(c.attr<std::string>("mode")) == 2)
        return Status::unsupported("node '" + c.nodeName() + "' (" + c.opKey() +
                                   "): cubic mode is defined for 2-D input only");
      OPFORGE_RETURN_IF_ERROR(
          requireEq(c, g.dim(0), x.dim(0), "grid and X must have the same batch size"));
      // An empty image has no pixel to sample or clamp to (border and reflection padding would
      // index before it).
      for (int i = 2; i < x.rank(); ++i) {
        if (isConstEq(x.dim(i), 0))
          return c.error("input 'X' " + toString(x.dims) + " has an empty spatial axis " +
                         std::to_string(i) + "; there is no pixel to sample");
        c.require(DimExpr(1), DimAssertion::Op::kLe, x.dim(i),
                  "input 'X' needs spatial axes of at least 1 (axis " + std::to_string(i) + ")");
      }
      std::vector<DimExpr> dims{x.dim(0), x.dim(1)};
      for (int i = 1; i <= nd; ++i) dims.push_back(g.dim(i));
      return SymDesc::make(x.dtype, std::move(dims));
    })
    .cpu([](KernelContext& k, std::span<const Tensor> in, std::span<const Tensor> out) -> Status {
      const Tensor &x = in[0], &g = in[1], &y = out[0];
      const int mode = modeOf(k.attr<std::string>("mode"));
      const std::string pad = k.attr<std::string>("padding_mode");
      const bool ac = k.attr<int64_t>("align_corners") != 0;
      const int nd = x.desc.rank() - 2;
      if (nd == 3 && mode == 2)
        return Status::unsupported("cubic GridSample is defined for 2-D input only");
      const int64_t n = x.desc.dims[0], ch = x.desc.dims[1];
      // size[i] is the input extent that grid component i indexes: (x, y, z) -> (W, H, D).
      std::vector<int64_t> size(nd), stride(nd);
      const auto xs = stridesOf(x.desc.dims);
      for (int i = 0; i < nd; ++i) {
        size[i] = x.desc.dims[x.desc.rank() - 1 - i];
        stride[i] = xs[x.desc.rank() - 1 - i];
      }
      const int64_t plane = prodOf(x.desc.dims, 2, x.desc.rank()),
                    points = prodOf(g.desc.dims, 1, g.desc.rank() - 1);
      return visitTypes<kFloats>(x.desc.dtype, "GridSample", [&](auto num) -> Status {
        using N = decltype(num);
        using C = typename N::C;
        const auto* px = ptrOf<N>(x);
        const auto* pg = ptrOf<N>(g);
        auto* py = mutPtr<N>(y);
        auto unnorm = [&](double v, int64_t sz) {
          return ac ? (v + 1) / 2 * static_cast<double>(sz - 1)
                    : ((v + 1) * static_cast<double>(sz) - 1) / 2;
        };
        auto padCoord = [&](double v, int64_t sz) {
          if (pad == "border") return std::clamp(v, 0.0, static_cast<double>(sz - 1));
          if (pad == "reflection") {
            v = ac ? reflect(v, 0, static_cast<double>(sz - 1))
                   : reflect(v, -0.5, static_cast<double>(sz) - 0.5);
            return std::clamp(v, 0.0, static_cast<double>(sz - 1));
          }
          return v;
        };
        // One input element at integer coordinates c[i]; zeros padding reads 0 outside, the other
        // modes clamp / mirror the index.
        auto pixel = [&](const typename N::S* base, const int64_t* c) -> double {
          int64_t off = 0;
          for (int i = 0; i < nd; ++i) {
            int64_t q = c[i];
            if (pad == "zeros") {
              if (q < 0 || q >= size[i]) return 0.0;
            } else if (pad == "border") {
              q = std::clamp<int64_t>(q, 0, size[i] - 1);
            } else {
              q = static_cast<int64_t>(std::lround(padCoord(static_cast<double>(q), size[i])));
            }
            off += q * stride[i];
          }
          return static_cast<double>(N::load(base[off]));
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
        double coord[3];
        int64_t c0[3], cc[3];
        for (int64_t b = 0; b < n; ++b)
          for (int64_t i = 0; i < points; ++i) {
            const auto* gp = pg + (b * points + i) * nd;
            // No pixel is at a NaN coordinate, nor at the mirror image of an infinite one: the
            // sample is NaN (PyTorch's bilinear and bicubic grid_sample give NaN there too). An
            // infinite coordinate is outside the image: 0 with zeros padding, the edge with border.
            bool undefined = false;
            for (int d = 0; d < nd; ++d) {
              coord[d] = unnorm(static_cast<double>(N::load(gp[d])), size[d]);
              undefined |= std::isnan(coord[d]) || (pad == "reflection" && std::isinf(coord[d]));
              if (undefined) break;
              if (mode != 2) coord[d] = padCoord(coord[d], size[d]);
              // Past 8 pixels outside, every tap is outside (or clamped to the same edge): the
              // clamp changes no result and keeps the index within int64. Bicubic taps under
              // reflection are mirrored one by one, so there only the int64 range is kept.
              coord[d] = mode == 2 && pad == "reflection"
                             ? std::clamp(coord[d], -kFarTap, kFarTap)
                             : std::clamp(coord[d], -8.0, static_cast<double>(size[d]) + 8);
              c0[d] = static_cast<int64_t>(std::floor(coord[d]));
            }
            for (int64_t c = 0; c < ch; ++c) {
              const auto* base = px + (b * ch + c) * plane;
              double v = 0;
              if (undefined) {
                v = std::numeric_limits<double>::quiet_NaN();
              } else if (mode == 0) {
                for (int d = 0; d < nd; ++d) cc[d] = static_cast<int64_t>(std::nearbyint(coord[d]));
                v = pixel(base, cc);
              } else if (mode == 1) {
                for (int corner = 0; corner < (1 << nd); ++corner) {
                  double w = 1;
                  for (int d = 0; d < nd; ++d) {
                    const bool hi = (corner >> d) & 1;
                    const double t = coord[d] - static_cast<double>(c0[d]);
                    cc[d] = c0[d] + (hi ? 1 : 0);
                    w *= hi ? t : 1 - t;
                  }
                  if (w != 0) v += w * pixel(base, cc);
                }
              } else {
                double cx[4], cy[4];
                cubic(coord[0] - static_cast<double>(c0[0]), cx);
                cubic(coord[1] - static_cast<double>(c0[1]), cy);
                for (int dy = 0; dy < 4; ++dy)
                  for (int dx = 0; dx < 4; ++dx) {
                    cc[0] = c0[0] - 1 + dx;
                    cc[1] = c0[1] - 1 + dy;
                    v += cy[dy] * cx[dx] * pixel(base, cc);
                  }
              }
              py[(b * ch + c) * points + i] = N::store(static_cast<C>(v));
            }
          }
        return Status::ok();
      });
    });
}  // namespace opforge::ops
