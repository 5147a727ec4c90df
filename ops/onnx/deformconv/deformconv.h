// deformconv.h — DeformConv's geometry and sampling, shared by its reference and CUDA tactic.
#pragma once

#include <cmath>
#include <cstdint>

#include "opforge/epilogue.h"  // OPFORGE_HOST_DEVICE

namespace opforge::ops {

struct DeformGeom {
  int64_t n, ic, ih, iw, oc, oh, ow, kh, kw;
  int64_t group, offset_group, sh, sw, dh, dw, ph, pw;
  bool has_bias, has_mask;
};

// Bilinear sample of plane x [ih, iw] at (h, w), each of the four neighbours outside the plane
// counting 0 (GridSample with align_corners = 1 and zero padding, as the ONNX reference samples).
template <typename Load>
OPFORGE_HOST_DEVICE inline double deformSample(Load load, int64_t ih, int64_t iw, double h,
                                               double w) {
  const double fh = floor(h), fw = floor(w);
  const int64_t h0 = static_cast<int64_t>(fh), w0 = static_cast<int64_t>(fw);
  const double lh = h - fh, lw = w - fw;
  double v = 0;
  for (int dy = 0; dy < 2; ++dy)
    for (int dx = 0; dx < 2; ++dx) {
      const int64_t y = h0 + dy, x = w0 + dx;
      if (y < 0 || y >= ih || x < 0 || x >= iw) continue;
      v += (dy ? lh : 1 - lh) * (dx ? lw : 1 - lw) * load(y * iw + x);
    }
  return v;
}

// Output element (b, o, i, j): the bias plus, over the input channels of o's group and the
// kernel taps, W * mask * sample at (i * sh - ph + ki * dh + offset_h, j * sw - pw + kj * dw +
// offset_w). Loaders take flat indices of X, W, offset, mask and bias.
template <typename LX, typename LW, typename LO, typename LM, typename LB>
OPFORGE_HOST_DEVICE inline double deformOutput(const DeformGeom& g, int64_t b, int64_t o, int64_t i,
                                               int64_t j, LX lx, LW lw, LO lo, LM lm, LB lb) {
  const int64_t icg = g.ic / g.group, ocg = g.oc / g.group, icog = g.ic / g.offset_group;
  const int64_t grp = o / ocg, taps = g.kh * g.kw, plane = g.oh * g.ow;
  double acc = g.has_bias ? lb(o) : 0.0;
  for (int64_t c = grp * icg; c < (grp + 1) * icg; ++c) {
    const int64_t og = c / icog;
    for (int64_t ki = 0; ki < g.kh; ++ki)
      for (int64_t kj = 0; kj < g.kw; ++kj) {
        const int64_t tap = ki * g.kw + kj;
        const int64_t obase = ((b * g.offset_group + og) * taps + tap) * 2;
        const double off_h = lo((obase + 0) * plane + i * g.ow + j);
        const double off_w = lo((obase + 1) * plane + i * g.ow + j);
        const double m =
            g.has_mask ? lm(((b * g.offset_group + og) * taps + tap) * plane + i * g.ow + j) : 1.0;
        const double h = static_cast<double>(i * g.sh - g.ph + ki * g.dh) + off_h;
        const double w = static_cast<double>(j * g.sw - g.pw + kj * g.dw) + off_w;
        const int64_t xbase = (b * g.ic + c) * g.ih * g.iw;
        const double s = deformSample([&](int64_t k) { return lx(xbase + k); }, g.ih, g.iw, h, w);
        acc += lw(((o * icg + (c - grp * icg)) * g.kh + ki) * g.kw + kj) * m * s;
      }
  }
  return acc;
}

}  // namespace opforge::ops
