// pooling.h — MaxPool and AveragePool over N-D windows (geometry in pool.h).
#pragma once

#include "combos.h"
#include "pool.h"

namespace opforge::ops {

// The window of a pooling node on input `x` (N, C, D1, ...).
inline Result<Window> poolWindow(const AttrMap& a, int rank) {
  if (!a.has("kernel_shape")) return Status::invalid("attribute 'kernel_shape' is required");
  return readWindow(a, rank - 2, a.get<std::vector<int64_t>>("kernel_shape"),
                    a.get<int64_t>("ceil_mode") != 0);
}

inline Result<SymDesc> poolShape(ShapeContext& c, unsigned types) {
  SymDesc x = c.input(0);
  OPFORGE_RETURN_IF_ERROR(checkType(c, "input 'X'", x.dtype, types));
  if (x.rank() < 3)
    return c.error("input 'X' must have rank >= 3 (N, C, D1, ...), got " + toString(x.dims));
  auto w = poolWindow(c.attrs(), x.rank());
  if (!w) return c.error(w.status().message());
  std::vector<DimExpr> in(x.dims.begin() + 2, x.dims.end());
  SymDesc y = x.like();
  auto out = windowOutDims(*w, in);
  for (int i = 0; i < w->nd; ++i) y.dims[2 + i] = out[i];
  return y;
}

// Visits every output position of a pooling window: f(o, taps, n, padded) with the flat offsets
// (within one plane) of the n taps that fall inside the input, and the number of taps inside the
// explicitly padded input (count_include_pad).
// Per axis and output coordinate: the first input coordinate of the window, the range [lo, hi)
// of taps inside the input, and the number of taps inside the explicitly padded input.
struct WindowRanges {
  std::vector<std::vector<int64_t>> start, lo, hi, pad;
};
inline WindowRanges windowRanges(const Window& w, const std::vector<int64_t>& isz,
                                 const std::vector<int64_t>& osz) {
  const int nd = w.nd;
  WindowRanges r;
  r.start.resize(nd), r.lo.resize(nd), r.hi.resize(nd), r.pad.resize(nd);
  auto cdiv = [](int64_t a, int64_t b) { return a <= 0 ? 0 : (a + b - 1) / b; };
  for (int a = 0; a < nd; ++a)
    for (int64_t o = 0; o < osz[a]; ++o) {
      const int64_t s0 = o * w.s[a] - w.pb[a];
      r.start[a].push_back(s0);
      r.lo[a].push_back(std::min(w.k[a], cdiv(-s0, w.d[a])));
      r.hi[a].push_back(std::min(w.k[a], cdiv(isz[a] - s0, w.d[a])));
      r.pad[a].push_back(std::min(w.k[a], cdiv(isz[a] + w.pe[a] - s0, w.d[a])));
    }
  return r;
}

template <typename F>
void forEachPoolWindow(const Window& w, const std::vector<int64_t>& isz,
                       const std::vector<int64_t>& osz, F&& f) {
  const int nd = w.nd;
  const WindowRanges r = windowRanges(w, isz, osz);
  const auto &start = r.start, &lo = r.lo, &hi = r.hi, &pad = r.pad;
  int64_t total = 1;
  for (int64_t o : osz) total *= o;
  int64_t ktotal = 1;
  for (int64_t k : w.k) ktotal *= k;
  std::vector<int64_t> idx(nd, 0), taps(static_cast<size_t>(ktotal)),
      next(static_cast<size_t>(ktotal));
  for (int64_t o = 0; o < total; ++o) {
    int64_t n = 1, padded = 1;
    taps[0] = 0;
    for (int a = 0; a < nd; ++a) {
      const int64_t i = idx[a], first = start[a][i], d = w.d[a], size = isz[a];
      int64_t m = 0;
      for (int64_t t = 0; t < n; ++t)
        for (int64_t j = lo[a][i]; j < hi[a][i]; ++j) next[m++] = taps[t] * size + first + j * d;
      taps.swap(next);
      n = m;
      padded *= pad[a][i];
    }
    f(o, taps.data(), n, padded);
    for (int a = nd - 1; a >= 0; --a) {
      if (++idx[a] < osz[a]) break;
      idx[a] = 0;
    }
  }
}

}  // namespace opforge::ops
