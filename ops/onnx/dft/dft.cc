// ONNX DFT (opsets 17-20): a discrete Fourier transform along one axis (common/dft.h).
//   input [..., L at axis, ..., 1|2] (real, or complex as (real, imaginary) pairs);
//   dft_length (optional input, known when the network is built): n, default L (irfft: 2 (L - 1));
//   axis: opset 17-19 an attribute (default 1), opset 20 an input (known when the network is
//   built; default -2), counted over the full rank; never the last axis;
//   inverse (1/n scaled), onesided: forward -> bins 0..n/2; inverse -> irfft, a real output.
//   output [..., n (or n/2 + 1 one-sided forward) at axis, ..., 2 (irfft: 1)], input's type.
// Reference: the direct sum per output element in double (dftElement).
#include "../common/dft.h"

#include "../common/util.h"

namespace opforge::ops {

namespace {

// The axis of this node: the opset 20 input, else the attribute.
Result<int64_t> axisOf(ShapeContext& c) {
  if (opsetOf(c.attrs()) >= 20) {
    if (!c.hasInput(2)) return int64_t{-2};
    OPFORGE_ASSIGN_OR_RETURN(auto v, needInts(c, 2, "axis"));
    if (v.size() != 1)
      return c.error("input 'axis' must be a scalar, got " + std::to_string(v.size()) + " values");
    return v[0];
  }
  if (c.hasInput(2))
    return c.error("input 'axis' exists from opset 20 (the model's is " +
                   std::to_string(opsetOf(c.attrs())) + "); use the attribute");
  return c.attr<int64_t>("axis");
}

// Run time: the same from the tensors.
int64_t axisAt(const AttrMap& a, std::span<const Tensor> in) {
  if (opsetOf(a) >= 20) return hasIn(in, 2) ? readInts(in[2])[0] : -2;
  return a.get<int64_t>("axis");
}

}  // namespace

// The line geometry of a call (also used by dft.cu's checks).
bool dftLineOfCall(const AttrMap& a, std::span<const Tensor> in, DftLine& g) {
  const auto& dims = in[0].desc.dims;
  const bool has_n = hasIn(in, 1);
  return dftLineFrom(dims.data(), static_cast<int>(dims.size()), axisAt(a, in), has_n,
                     has_n ? readInts(in[1])[0] : 0, a.get<int64_t>("inverse") != 0,
                     a.get<int64_t>("onesided") != 0, g);
}

OPFORGE_OP(DFT, "ai.onnx::DFT")
    .doc("Discrete Fourier transform along one axis (ONNX DFT).")
    .input("input", "[..., L, ..., 1 | 2]")
    .valueInput("dft_length", true, "INT32/INT64 scalar, known when the network is built")
    .valueInput("axis", true, "opset 20: INT64 scalar, known when the network is built")
    .output("output")
    .attr<int64_t>("axis", int64_t{1}, "opset 17-19")
    .attr<int64_t>("inverse", int64_t{0})
    .attr<int64_t>("onesided", int64_t{0})
    .with(onnxOpsetAttr)
    .check([](const AttrMap& a) -> Status {
      for (const char* n : {"inverse", "onesided"})
        if (a.get<int64_t>(n) != 0 && a.get<int64_t>(n) != 1)
          return Status::invalid(std::string("attribute '") + n + "' must be 0 or 1, got " +
                                 std::to_string(a.get<int64_t>(n)));
      return Status::ok();
    })
    .shape([](ShapeContext& c) -> Result<SymDesc> {
      const SymDesc x = c.input(0);
      OPFORGE_RETURN_IF_ERROR(checkType(c, "input 'input'", x.dtype, kFloats));
      const int r = x.rank();
      if (r < 2)
        return c.error("input 'input' must have rank >= 2 ([..., 1 | 2]), got " + toString(x.dims));
      if (!x.dim(-1).isConst() || (x.dim(-1).constValue() != 1 && x.dim(-1).constValue() != 2))
        return c.error("input 'input' must end in an axis of 1 (real) or 2 (complex), got " +
                       toString(x.dims));
      OPFORGE_ASSIGN_OR_RETURN(const int64_t axis_raw, axisOf(c));
      if (axis_raw < -r || axis_raw >= r || (axis_raw < 0 ? axis_raw + r : axis_raw) == r - 1)
        return c.error("axis " + std::to_string(axis_raw) +
                       " is out of range for an input of rank " + std::to_string(r) +
                       " (valid: " + std::to_string(-r) + " to " + std::to_string(-2) +
                       " or 0 to " + std::to_string(r - 2) +
                       "; the last axis holds the real and imaginary parts)");
      const int axis = static_cast<int>(axis_raw < 0 ? axis_raw + r : axis_raw);
      const bool inverse = c.attr<int64_t>("inverse") != 0,
                 onesided = c.attr<int64_t>("onesided") != 0;
      DimExpr n;
      if (c.hasInput(1)) {
        OPFORGE_ASSIGN_OR_RETURN(auto v, needInts(c, 1, "dft_length"));
        if (v.size() != 1)
          return c.error("input 'dft_length' must be a scalar, got " + std::to_string(v.size()) +
                         " values");
        if (v[0] < 1 || v[0] > (int64_t{1} << 31))
          return c.error("input 'dft_length' must be in [1, 2^31], got " + std::to_string(v[0]));
        n = v[0];
      } else {
        n = inverse && onesided ? 2 * (x.dim(axis) - 1) : x.dim(axis);
        if (n.isConst() && n.constValue() < 1)
          return c.error("the transform length (" + n.toString() + ", from axis " +
                         std::to_string(axis) + " of " + toString(x.dims) + ") must be at least 1");
        c.require(n, DimAssertion::Op::kLe, int64_t{1} << 31,
                  "the transform length must be <= 2^31");
        c.require(1, DimAssertion::Op::kLe, n, "the transform length must be at least 1");
      }
      SymDesc y = x.like();
      y.dims[axis] = !inverse && onesided ? floorDiv(n, 2) + 1 : n;
      y.dims.back() = inverse && onesided ? 1 : 2;
      OPFORGE_RETURN_IF_ERROR(checkElementCount(c, y.dims, "output"));
      return y;
    })
    .cpu([](KernelContext& k, std::span<const Tensor> in, std::span<const Tensor> out) -> Status {
      DftLine g;
      if (!dftLineOfCall(k.attrs(), in, g))
        return Status::invalid(
            "DFT: the axis or dft_length differs from the one the network was "
            "built with");
      const Tensor& x = in[0];
      const DataType t = x.desc.dtype;
      auto load = [&](int64_t j) { return loadAsDouble(x.data, t, j); };
      for (int64_t o = 0; o < g.outer; ++o)
        for (int64_t kk = 0; kk < g.out_len; ++kk)
          for (int64_t i = 0; i < g.inner; ++i) {
            double re, im;
            dftElement(g, o, kk, i, load, re, im);
            const int64_t at = ((o * g.out_len + kk) * g.inner + i) * g.out_c;
            storeFromDouble(out[0].data, t, at, re);
            if (g.out_c == 2) storeFromDouble(out[0].data, t, at + 1, im);
          }
      return Status::ok();
    });

}  // namespace opforge::ops
