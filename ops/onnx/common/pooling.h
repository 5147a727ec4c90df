// pooling.h — MaxPool and AveragePool over N-D windows (geometry in pool.h).
#pragma once

#include "pool.h"

namespace opforge::ops {

// The window of a pooling node on input `x` (N, C, D1, ...).
inline Result<Window> poolWindow(const AttrMap& a, int rank) {
  if (!a.has("kernel_shape")) return Status::invalid("attribute 'kernel_shape' is required");
  return readWindow(a, rank - 2, a.get<std::vector<int64_t>>("kernel_shape"), a.get<int64_t>("ceil_mode") != 0);
}

inline Result<SymDesc> poolShape(ShapeContext& c, unsigned types) {
  SymDesc x = c.input(0);
  OPFORGE_RETURN_IF_ERROR(checkType(c, "input 'X'", x.dtype, types));
  if (x.rank() < 3) return c.error("input 'X' must have rank >= 3 (N, C, D1, ...), got " + toString(x.dims));
  auto w = poolWindow(c.attrs(), x.rank());
  if (!w) return c.error(w.status().message());
  std::vector<DimExpr> in(x.dims.begin() + 2, x.dims.end());
  SymDesc y = x.like();
  auto out = windowOutDims(*w, in);
  for (int i = 0; i < w->nd; ++i) y.dims[2 + i] = out[i];
  return y;
}

// Flat offsets (within one plane) and per-axis offsets of each kernel position.
struct KernelTaps {
  std::vector<std::vector<int64_t>> at;  // [tap][axis] = j * d
};
inline KernelTaps kernelTaps(const Window& w) {
  KernelTaps t;
  int64_t n = 1;
  for (int64_t k : w.k) n *= k;
  std::vector<int64_t> j(w.nd, 0);
  for (int64_t i = 0; i < n; ++i) {
    std::vector<int64_t> off(w.nd);
    for (int a = 0; a < w.nd; ++a) off[a] = j[a] * w.d[a];
    t.at.push_back(std::move(off));
    for (int a = w.nd - 1; a >= 0; --a) {
      if (++j[a] < w.k[a]) break;
      j[a] = 0;
    }
  }
  return t;
}

}  // namespace opforge::ops
