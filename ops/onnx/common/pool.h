// pool.h — window geometry shared by Conv, ConvTranspose, MaxPool and AveragePool: the
// attributes kernel_shape, strides, dilations, pads, auto_pad and ceil_mode, the symbolic output
// size and the concrete padding.
//
// Output size per spatial axis, with dk = (k - 1) * d + 1:
//   NOTSET:          floor((in + pb + pe - dk) / s) + 1
//                    ceil_mode: min(ceil((in + pb + pe - dk) / s) + 1, ceil((in + pb) / s)) — the
//                    last window must start inside the input or the left padding (PyTorch, ONNX)
//   VALID:           as NOTSET with zero padding
//   SAME_UPPER/LOWER: ceil(in / s); total padding max(0, (out - 1) * s + dk - in), the odd unit at
//                    the end (UPPER) or the beginning (LOWER).
#pragma once

#include <algorithm>

#include "util.h"

namespace opforge::ops {

inline OpDef& windowAttrs(OpDef& d) {
  return d
      .attr<std::string>("auto_pad", std::string("NOTSET"),
                         "NOTSET | SAME_UPPER | SAME_LOWER | VALID")
      .optionalAttr<std::vector<int64_t>>("kernel_shape")
      .optionalAttr<std::vector<int64_t>>("strides")
      .optionalAttr<std::vector<int64_t>>("dilations")
      .optionalAttr<std::vector<int64_t>>("pads", "begin values of every axis, then end values");
}

struct Window {
  int nd = 0;
  std::vector<int64_t> k, s, d, pb, pe;  // kernel, stride, dilation, pads at begin / end
  std::string auto_pad;
  bool ceil = false;
  int64_t span(int i) const { return (k[i] - 1) * d[i] + 1; }
};

// Reads the attributes for `nd` spatial axes with kernel `kernel` (from kernel_shape or W).
// Errors name the attribute whose length or value is wrong.
inline Result<Window> readWindow(const AttrMap& a, int nd, const std::vector<int64_t>& kernel,
                                 bool ceil_mode) {
  Window w;
  w.nd = nd;
  w.k = kernel;
  w.auto_pad = a.get<std::string>("auto_pad");
  w.ceil = ceil_mode;
  if (w.auto_pad != "NOTSET" && w.auto_pad != "SAME_UPPER" && w.auto_pad != "SAME_LOWER" &&
      w.auto_pad != "VALID")
    return Status::invalid(
        "attribute 'auto_pad' must be NOTSET, SAME_UPPER, SAME_LOWER or VALID, got '" + w.auto_pad +
        "'");
  // Every kernel size, stride, dilation and pad is at most a dimension's maximum (2^31 - 1), so
  // that the window's span (k - 1) * d + 1 and the output-size arithmetic fit in int64 (UBSan found
  // dilations of 2^62 overflowing it).
  constexpr int64_t kMax = (int64_t{1} << 31) - 1;
  auto list = [&](const char* name, size_t n, int64_t def,
                  int64_t min) -> Result<std::vector<int64_t>> {
    if (!a.has(name)) return std::vector<int64_t>(n, def);
    auto v = a.get<std::vector<int64_t>>(name);
    if (v.size() != n)
      return Status::invalid(std::string("attribute '") + name + "' has " +
                             std::to_string(v.size()) + " values; " + std::to_string(n) +
                             " expected for " + std::to_string(nd) + " spatial axes");
    for (int64_t x : v)
      if (x < min || x > kMax)
        return Status::invalid(std::string("attribute '") + name + "' holds " + std::to_string(x) +
                               " (must be >= " + std::to_string(min) + " and at most 2^31 - 1)");
    return v;
  };
  if (static_cast<int>(w.k.size()) != nd)
    return Status::invalid("kernel_shape has " + std::to_string(w.k.size()) +
                           " values; the input has " + std::to_string(nd) + " spatial axes");
  for (int64_t x : w.k)
    if (x < 1 || x > kMax)
      return Status::invalid("kernel_shape holds " + std::to_string(x) +
                             " (must be >= 1 and at most 2^31 - 1)");
  OPFORGE_ASSIGN_OR_RETURN(w.s, list("strides", nd, 1, 1));
  OPFORGE_ASSIGN_OR_RETURN(w.d, list("dilations", nd, 1, 1));
  OPFORGE_ASSIGN_OR_RETURN(auto pads, list("pads", 2 * static_cast<size_t>(nd), 0, 0));
  w.pb.assign(pads.begin(), pads.begin() + nd);
  w.pe.assign(pads.begin() + nd, pads.end());
  if (w.auto_pad != "NOTSET")
    std::fill(w.pb.begin(), w.pb.end(), 0), std::fill(w.pe.begin(), w.pe.end(), 0);
  return w;
}

// Symbolic output sizes of a convolution or pooling window over `in` spatial dims.
inline std::vector<DimExpr> windowOutDims(const Window& w, const std::vector<DimExpr>& in) {
  std::vector<DimExpr> out;
  for (int i = 0; i < w.nd; ++i) {
    if (w.auto_pad == "SAME_UPPER" || w.auto_pad == "SAME_LOWER") {
      out.push_back(ceilDiv(in[i], w.s[i]));
      continue;
    }
    const DimExpr ext = in[i] + (w.pb[i] + w.pe[i] - w.span(i));
    if (w.ceil)
      out.push_back(min(ceilDiv(ext, w.s[i]) + 1, ceilDiv(in[i] + w.pb[i], w.s[i])));
    else
      out.push_back(floorDiv(ext, w.s[i]) + 1);
  }
  return out;
}

// Concrete pads (begin, end) for input sizes `in` (fills pb/pe for SAME_*).
inline void resolvePads(Window& w, const std::vector<int64_t>& in) {
  if (w.auto_pad != "SAME_UPPER" && w.auto_pad != "SAME_LOWER") return;
  for (int i = 0; i < w.nd; ++i) {
    const int64_t out = (in[i] + w.s[i] - 1) / w.s[i];
    const int64_t total = std::max<int64_t>(0, (out - 1) * w.s[i] + w.span(i) - in[i]);
    const int64_t small = total / 2;
    w.pb[i] = w.auto_pad == "SAME_UPPER" ? small : total - small;
    w.pe[i] = total - w.pb[i];
  }
}

// Visits every output position of an N-D window op: f(out_index, first input coordinate per axis)
// where the window covers first + j * d for j in [0, k).
template <typename F>
void forEachWindow(const Window& w, const std::vector<int64_t>& out, F&& f) {
  int64_t total = 1;
  for (int64_t o : out) total *= o;
  std::vector<int64_t> idx(w.nd, 0), start(w.nd);
  for (int i = 0; i < w.nd; ++i) start[i] = -w.pb[i];
  for (int64_t o = 0; o < total; ++o) {
    f(o, start);
    for (int i = w.nd - 1; i >= 0; --i) {
      if (++idx[i] < out[i]) {
        start[i] += w.s[i];
        break;
      }
      idx[i] = 0;
      start[i] = -w.pb[i];
    }
  }
}

}  // namespace opforge::ops
