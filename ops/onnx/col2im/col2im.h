// col2im.h — Col2Im's window geometry, shared by its reference and CUDA tactic.
#pragma once

#include <cstdint>
#include <vector>

#include "opforge/op.h"

namespace opforge::ops {

// Per spatial axis d: block (kernel) size k, dilation, stride, pads before/after, image size and
// the number of block positions (floor((image + pb + pe - (dil * (k - 1) + 1)) / stride) + 1).
struct Col2ImGeom {
  std::vector<int64_t> k, dil, stride, pb, pe;
};

// The attributes (absent: dilations and strides 1, pads 0) for `nd` spatial axes.
inline Col2ImGeom col2imGeom(const AttrMap& a, size_t nd) {
  Col2ImGeom g;
  auto get = [&](const char* n, int64_t dflt) {
    return a.has(n) ? a.get<std::vector<int64_t>>(n) : std::vector<int64_t>(nd, dflt);
  };
  g.dil = get("dilations", 1);
  g.stride = get("strides", 1);
  const auto pads =
      a.has("pads") ? a.get<std::vector<int64_t>>("pads") : std::vector<int64_t>(2 * nd, 0);
  g.pb.assign(pads.begin(), pads.begin() + static_cast<std::ptrdiff_t>(nd));
  g.pe.assign(pads.begin() + static_cast<std::ptrdiff_t>(nd), pads.end());
  return g;
}

}  // namespace opforge::ops
