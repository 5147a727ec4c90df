// ONNX Pad: adds pads[i] elements before and pads[i + n] after axis axes[i] (all axes when `axes`
// is absent); negative pads crop. Modes: constant (constant_value, default 0), reflect (mirror
// without repeating the edge), edge (repeat the edge), wrap (circular). The pads must be known
// when the network is built (opset 11+: input; older: attribute).
#include <algorithm>
#include <cstring>

#include "pad.h"

namespace opforge::ops {

// The kernels copy elements of data's size into the output: its type, and constant_value's, must
// be data's. The shape rule says so, but it cannot run at load time where the pads are computed at
// run time (a plan whose pads were its UINT64 input and whose output was FP32 made the kernel write
// 8-byte elements into 4-byte ones: plan fuzzer).
Status padTypes(std::span<const Tensor> in, std::span<const Tensor> out) {
  const DataType t = in[0].desc.dtype;
  if (out[0].desc.dtype != t)
    return Status::invalid("output type " + dtypeName(out[0].desc.dtype) + " differs from data's " +
                           dtypeName(t));
  if (hasIn(in, 2) && in[2].numel() > 0 && in[2].desc.dtype != t)
    return Status::invalid("input 'constant_value' has type " + dtypeName(in[2].desc.dtype) +
                           "; data has " + dtypeName(t));
  return Status::ok();
}

namespace {

// Source coordinate of output coordinate q (already shifted by the begin pad) on an axis of size
// d, or -1 for the constant.
int64_t sourceIndex(int64_t q, int64_t d, int mode) {
  if (q >= 0 && q < d) return q;
  switch (mode) {
    case 1: {  // reflect
      if (d == 1) return 0;
      const int64_t period = 2 * (d - 1);
      int64_t m = q % period;
      if (m < 0) m += period;
      return m < d ? m : period - m;
    }
    case 2:
      return q < 0 ? 0 : d - 1;  // edge
    case 3: {                    // wrap
      int64_t m = q % d;
      return m < 0 ? m + d : m;
    }
    default:
      return -1;
  }
}

int modeOf(const std::string& m) {
  return m == "constant" ? 0 : m == "reflect" ? 1 : m == "edge" ? 2 : m == "wrap" ? 3 : -1;
}

// The output of pads computed from dimensions (F.pad(x, (0, 0, 0, t - s)), transformers' SEW):
// each padded axis grows by the expressions; what the numeric rule checks becomes assertions,
// checked for every profile's shapes and at run time.
Result<SymDesc> symbolicPadShape(ShapeContext& c, const SymDesc& x, const std::vector<DimExpr>& v) {
  const int r = x.rank();
  std::vector<int64_t> axes;
  if (c.hasInput(3)) {
    OPFORGE_ASSIGN_OR_RETURN(axes, needInts(c, 3, "axes"));
  } else {
    for (int a = 0; a < r; ++a) axes.push_back(a);
  }
  if (v.size() != 2 * axes.size())
    return c.error("pads has " + std::to_string(v.size()) + " values; " +
                   std::to_string(2 * axes.size()) + " expected (two per padded axis)");
  if (c.hasInput(2) && c.input(2).dtype != x.dtype)
    return c.error("input 'constant_value' has type " + dtypeName(c.input(2).dtype) +
                   "; data has " + dtypeName(x.dtype));
  std::vector<DimExpr> b(r, DimExpr(int64_t{0})), e(r, DimExpr(int64_t{0}));
  for (size_t i = 0; i < axes.size(); ++i) {
    if (axes[i] < -r || axes[i] >= r)
      return c.error("axes value " + std::to_string(axes[i]) + " is out of range for rank " +
                     std::to_string(r));
    const int a = wrapAxis(axes[i], r);
    b[a] = v[i];
    e[a] = v[i + axes.size()];
  }
  const int mode = modeOf(c.attr<std::string>("mode"));
  SymDesc y = x.like();
  for (int a = 0; a < r; ++a) {
    if (isConstEq(b[a], 0) && isConstEq(e[a], 0)) continue;
    y.dims[a] = x.dim(a) + b[a] + e[a];
    c.require(0, DimAssertion::Op::kLe, y.dims[a], "pads must not crop an axis below zero");
    if (mode != 0) {
      c.require(1, DimAssertion::Op::kLe, x.dim(a), "a padded axis must not be empty");
      if (mode == 1) {
        c.require(b[a], DimAssertion::Op::kLe, x.dim(a) - 1,
                  "mode 'reflect' pads at most size - 1 per side");
        c.require(e[a], DimAssertion::Op::kLe, x.dim(a) - 1,
                  "mode 'reflect' pads at most size - 1 per side");
      }
    }
  }
  OPFORGE_RETURN_IF_ERROR(checkElementCount(c, y.dims, "output"));
  return y;
}

}  // namespace

OPFORGE_OP(Pad, "ai.onnx::Pad")
    .doc("Pads (or crops) a tensor.")
    .input("data")
    .valueInput("pads", true, "INT64 [2 * number of padded axes] (opset 11)")
    .optionalInput("constant_value", "scalar, data's type (default 0)")
    .valueInput("axes", true, "INT32/INT64 axes the pads apply to (opset 18)")
    .output("output")
    .attr<std::string>("mode", std::string("constant"), "constant | reflect | edge | wrap")
    .optionalAttr<std::vector<int64_t>>("pads", "opset < 11")
    .optionalAttr<double>("value", "opset < 11")
    .check([](const AttrMap& a) -> Status {
      if (modeOf(a.get<std::string>("mode")) < 0)
        return Status::invalid("attribute 'mode' must be constant, reflect, edge or wrap, got '" +
                               a.get<std::string>("mode") + "'");
      return Status::ok();
    })
    .shape([](ShapeContext& c) -> Result<SymDesc> {
      SymDesc x = c.input(0);
      std::vector<int64_t> pads, axes;
      if (c.hasInput(1)) {
        OPFORGE_ASSIGN_OR_RETURN(auto v, needValue(c, 1, "pads"));
        if (!std::all_of(v.begin(), v.end(), [](const DimExpr& d) { return d.isConst(); }))
          return symbolicPadShape(c, x, v);
        for (const auto& d : v) pads.push_back(d.constValue());
      } else if (c.attrs().has("pads")) {
        pads = c.attr<std::vector<int64_t>>("pads");
      } else {
        return c.error("needs pads (input, or attribute before opset 11)");
      }
      if (c.hasInput(3)) {
        OPFORGE_ASSIGN_OR_RETURN(axes, needInts(c, 3, "axes"));
      }
      if (c.hasInput(2) && c.input(2).dtype != x.dtype)
        return c.error("input 'constant_value' has type " + dtypeName(c.input(2).dtype) +
                       "; data has " + dtypeName(x.dtype));
      auto pe = expandPads(pads, axes, x.rank());
      if (!pe) return c.error(pe.status().message());
      const int mode = modeOf(c.attr<std::string>("mode"));
      SymDesc y = x.like();
      for (int a = 0; a < x.rank(); ++a) {
        const int64_t b = pe->first[a], e = pe->second[a];
        int64_t be;
        if (__builtin_add_overflow(b, e, &be))
          return c.error("pads " + std::to_string(b) + ", " + std::to_string(e) + " of axis " +
                         std::to_string(a) + " overflow a 64-bit dimension");
        y.dims[a] = x.dim(a) + be;
        if (b == 0 && e == 0) continue;
        if (!y.dims[a].isConst() && x.dim(a).isConst())  // the sum did not fit in 64 bits
          return c.error("pads " + std::to_string(b) + ", " + std::to_string(e) + " on axis " +
                         std::to_string(a) + " (size " + x.dim(a).toString() +
                         ") give a dimension that overflows 64 bits");
        // As ONNX Runtime: reflect mirrors without the edge value, so at most d - 1 per side.
        if (mode == 1 && x.dim(a).isConst() &&
            (b > x.dim(a).constValue() - 1 || e > x.dim(a).constValue() - 1))
          return c.error(
              "mode 'reflect' pads axis " + std::to_string(a) + " (size " + x.dim(a).toString() +
              ") by " + std::to_string(b) + ", " + std::to_string(e) +
              "; at most size - 1 = " + std::to_string(x.dim(a).constValue() - 1) + " per side");
        if (y.dims[a].isConst() && y.dims[a].constValue() < 0)
          return c.error("pads " + std::to_string(b) + ", " + std::to_string(e) + " crop axis " +
                         std::to_string(a) + " (size " + x.dim(a).toString() + ") below zero");
        if (mode != 0) {
          if (isConstEq(x.dim(a), 0))
            return c.error("mode '" + c.attr<std::string>("mode") + "' cannot pad the empty axis " +
                           std::to_string(a));
          if (!x.dim(a).isConst())
            c.require(1, DimAssertion::Op::kLe, x.dim(a), "a padded axis must not be empty");
          if (mode == 1 && !x.dim(a).isConst())
            c.require(std::max(b, e), DimAssertion::Op::kLe, x.dim(a) - 1,
                      "mode 'reflect' pads at most size - 1 per side");
        }
        if (!y.dims[a].isConst())
          c.require(0, DimAssertion::Op::kLe, y.dims[a], "pads must not crop an axis below zero");
      }
      OPFORGE_RETURN_IF_ERROR(checkElementCount(c, y.dims, "output"));
      return y;
    })
    .cpu([](KernelContext& k, std::span<const Tensor> in, std::span<const Tensor> out) -> Status {
      const Tensor &x = in[0], &y = out[0];
      OPFORGE_RETURN_IF_ERROR(padTypes(in, out));
      const int r = x.desc.rank();
      std::vector<int64_t> pads =
          hasIn(in, 1) ? readInts(in[1]) : k.attr<std::vector<int64_t>>("pads");
      std::vector<int64_t> axes = hasIn(in, 3) ? readInts(in[3]) : std::vector<int64_t>{};
      OPFORGE_ASSIGN_OR_RETURN(auto pe, expandPads(pads, axes, r));
      const int mode = modeOf(k.attr<std::string>("mode"));
      const size_t es = dtypeSize(x.desc.dtype);
      std::vector<uint8_t> fill(es, 0);
      if (hasIn(in, 2) && in[2].numel() >= 1) {
        std::memcpy(fill.data(), in[2].data, es);
      } else if (k.attrs().has("value")) {
        storeFromDouble(fill.data(), x.desc.dtype, 0, k.attr<double>("value"));
      }
      const auto xs = stridesOf(x.desc.dims);
      const auto* px = static_cast<const uint8_t*>(x.data);
      auto* py = static_cast<uint8_t*>(y.data);
      if (y.numel() == 0) return Status::ok();
      if (r == 0) {
        std::memcpy(py, px, es);
        return Status::ok();
      }
      // Row by row along the last axis: a row whose outer coordinates fall in the constant is
      // filled; otherwise the run of columns that maps into x in order is one memcpy and only the
      // padded columns are looked up one by one.
      const int64_t cols = y.desc.dims[r - 1], xcols = x.desc.dims[r - 1], left = pe.first[r - 1];
      const int64_t in_lo = std::clamp<int64_t>(left, 0, cols);
      const int64_t in_hi = std::clamp<int64_t>(left + xcols, in_lo, cols);
      const int64_t rows = y.numel() / cols;
      std::vector<int64_t> idx(r - 1, 0);
      for (int64_t row = 0; row < rows; ++row) {
        uint8_t* dst = py + row * cols * static_cast<int64_t>(es);
        int64_t off = 0;
        bool constant = false;
        for (int a = 0; a < r - 1 && !constant; ++a) {
          const int64_t s = sourceIndex(idx[a] - pe.first[a], x.desc.dims[a], mode);
          if (s < 0) constant = true;
          off += s * xs[a];
        }
        const uint8_t* src = constant ? nullptr : px + off * static_cast<int64_t>(es);
        for (int64_t j = 0; j < cols; ++j) {
          if (j == in_lo && !constant && in_hi > in_lo) {
            std::memcpy(dst + j * es, src + (j - left) * es, (in_hi - in_lo) * es);
            j = in_hi - 1;
            continue;
          }
          const int64_t s = constant ? -1 : sourceIndex(j - left, xcols, mode);
          std::memcpy(dst + j * es, s < 0 ? fill.data() : src + s * static_cast<int64_t>(es), es);
        }
        for (int a = r - 2; a >= 0; --a) {
          if (++idx[a] < y.desc.dims[a]) break;
          idx[a] = 0;
        }
      }
      return Status::ok();
    });
}  // namespace opforge::ops
