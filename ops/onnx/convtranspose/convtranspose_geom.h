// convtranspose_geom.h — ConvTranspose's geometry (shared by the reference and the CUDA tactics):
// strides, dilations, output padding, explicit output_shape, and the pads derived for SAME_* or an
// explicit output shape.
#pragma once

#include <algorithm>

#include "../common/util.h"

namespace opforge::ops {

struct TGeom {
  std::vector<int64_t> k, s, d, pb, pe, op_pad, out;
  bool explicit_out = false;
};

inline Result<TGeom> transposeGeom(const AttrMap& a, int nd, const std::vector<int64_t>& kernel) {
  TGeom g;
  // Strides, dilations, pads and output sizes are at most a dimension's maximum (2^31 - 1): then
  // s * (in - 1) + output_padding + (k - 1) * d + 1 fits in int64 (it overflowed with 2^62).
  constexpr int64_t kMax = (int64_t{1} << 31) - 1;
  auto bounded = [&](const char* name, const std::vector<int64_t>& v, int64_t min) -> Status {
    for (int64_t x : v)
      if (x < min || x > kMax)
        return Status::invalid(std::string("attribute '") + name + "' holds " + std::to_string(x) +
                               " (must be >= " + std::to_string(min) + " and at most 2^31 - 1)");
    return Status::ok();
  };
  auto list = [&](const char* name, int64_t def) -> Result<std::vector<int64_t>> {
    if (!a.has(name)) return std::vector<int64_t>(nd, def);
    auto v = a.get<std::vector<int64_t>>(name);
    if (static_cast<int>(v.size()) != nd)
      return Status::invalid(std::string("attribute '") + name + "' has " +
                             std::to_string(v.size()) + " values; " + std::to_string(nd) +
                             " expected");
    OPFORGE_RETURN_IF_ERROR(bounded(name, v, def));
    return v;
  };
  g.k = kernel;
  OPFORGE_ASSIGN_OR_RETURN(g.s, list("strides", 1));
  OPFORGE_ASSIGN_OR_RETURN(g.d, list("dilations", 1));
  OPFORGE_ASSIGN_OR_RETURN(g.op_pad, list("output_padding", 0));
  for (int i = 0; i < nd; ++i)
    if (g.s[i] < 1 || g.d[i] < 1) return Status::invalid("strides and dilations must be >= 1");
  std::vector<int64_t> pads(2 * nd, 0);
  if (a.has("pads")) {
    pads = a.get<std::vector<int64_t>>("pads");
    if (static_cast<int>(pads.size()) != 2 * nd)
      return Status::invalid("attribute 'pads' has " + std::to_string(pads.size()) + " values; " +
                             std::to_string(2 * nd) + " expected");
    OPFORGE_RETURN_IF_ERROR(bounded("pads", pads, 0));
  }
  g.pb.assign(pads.begin(), pads.begin() + nd);
  g.pe.assign(pads.begin() + nd, pads.end());
  if (a.has("output_shape")) {
    auto os = a.get<std::vector<int64_t>>("output_shape");
    if (static_cast<int>(os.size()) == nd + 2) os.erase(os.begin(), os.begin() + 2);
    if (static_cast<int>(os.size()) != nd)
      return Status::invalid("attribute 'output_shape' has " + std::to_string(os.size()) +
                             " values; " + std::to_string(nd) + " expected");
    OPFORGE_RETURN_IF_ERROR(bounded("output_shape", os, 0));
    g.out = os;
    g.explicit_out = true;
  }
  return g;
}

// Output size of axis i for input size `in` (also fixes the pads when they are derived).
inline int64_t transposeOut(TGeom& g, const std::string& auto_pad, int i, int64_t in) {
  const int64_t full = g.s[i] * (in - 1) + g.op_pad[i] + (g.k[i] - 1) * g.d[i] + 1;
  const bool same = auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER";
  if (!g.explicit_out && !same) return full - g.pb[i] - g.pe[i];
  const int64_t out = g.explicit_out ? g.out[i] : in * g.s[i];
  const int64_t total = std::max<int64_t>(0, full - out);  // a larger output is filled past the end
  if (auto_pad == "SAME_UPPER") {
    g.pb[i] = total / 2;
    g.pe[i] = total - total / 2;
  } else {
    g.pb[i] = total - total / 2;
    g.pe[i] = total / 2;
  }
  return out;
}

}  // namespace opforge::ops
