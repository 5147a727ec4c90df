// quantize.h — what QuantizeLinear and DequantizeLinear share: the checks of scale and zero point
// against the quantized tensor (per-tensor, per-axis along `axis`, or blocked along `axis` with
// `block_size`), and the layout that maps an element to its scale: element (o, a, r) of x seen as
// [outer, n, inner] around `axis` uses scale o*so + (a/bs)*sa + r*si.
#pragma once

#include <string>

#include "util.h"

namespace opforge::ops {

// The integer types opforge quantizes to (float8 and 4-bit types are not DataTypes of opforge).
constexpr unsigned kQuantTypes = kI8 | kU8 | kI16 | kU16;

struct QuantLayout {
  int64_t outer = 1, n = 1, inner = 1;  // x around the axis
  int64_t so = 0, sa = 0, si = 0, bs = 1;
};

// Checks scale (input 1) and zero point (input 2, when present) of a Q/DQ node against x (input
// 0). Per-tensor: scale a scalar or of one element; per-axis: 1-D [x.dims[axis]]; blocked
// (block_size > 0): x's rank, x's dims except ceil(x.dims[axis] / block_size) at `axis`.
inline Status checkQuantParams(ShapeContext& c, const SymDesc& x, int64_t block_size) {
  SymDesc s = c.input(1);
  OPFORGE_RETURN_IF_ERROR(checkType(c, "input 'scale'", s.dtype, kFloats));
  if (block_size < 0)
    return c.error("attribute 'block_size' must be >= 0, got " + std::to_string(block_size));
  const bool scalar = s.rank() == 0 || (s.rank() == 1 && isConstEq(s.dim(0), 1));
  if (block_size > 0) {
    if (s.rank() != x.rank())
      return c.error("blocked quantization (block_size " + std::to_string(block_size) +
                     ") needs a scale of the input's rank " + std::to_string(x.rank()) + ", got " +
                     toString(s.dims));
    OPFORGE_ASSIGN_OR_RETURN(int axis, normAxis(c, c.attr<int64_t>("axis"), x.rank()));
    for (int d = 0; d < x.rank(); ++d) {
      DimExpr want = d == axis ? ceilDiv(x.dim(d), block_size) : x.dim(d);
      OPFORGE_RETURN_IF_ERROR(
          requireEq(c, s.dim(d), want,
                    "scale dim " + std::to_string(d) + " must be " +
                        (d == axis ? "ceil(input dim / block_size)" : "the input's dim")));
    }
  } else if (!scalar) {
    if (s.rank() != 1)
      return c.error("scale must be a scalar (per-tensor) or 1-D (per-axis), got " +
                     toString(s.dims));
    if (x.rank() == 0) return c.error("a per-axis scale needs an input of rank >= 1");
    OPFORGE_ASSIGN_OR_RETURN(int axis, normAxis(c, c.attr<int64_t>("axis"), x.rank()));
    OPFORGE_RETURN_IF_ERROR(requireEq(
        c, s.dim(0), x.dim(axis),
        "a per-axis scale must have the size of the input's axis " + std::to_string(axis)));
  }
  if (const TensorValue* t = c.constant(1))
    for (int64_t k = 0; k < t->desc.numel(); ++k)
      if (loadAsDouble(t->data.data(), t->desc.dtype, k) == 0)
        return c.error("input 'scale' holds 0 at position " + std::to_string(k) +
                       " (a quantization scale must be nonzero)");
  if (c.hasInput(2)) {
    SymDesc z = c.input(2);
    // Per tensor: a scalar and a one-element 1-D are the same (ONNX Runtime's quantizer writes a
    // [1] scale beside a scalar zero point).
    const bool zscalar = z.rank() == 0 || (z.rank() == 1 && isConstEq(z.dim(0), 1));
    if (scalar && zscalar && block_size == 0) return Status::ok();
    if (z.rank() != s.rank())
      return c.error("zero point " + toString(z.dims) + " must have the shape of the scale " +
                     toString(s.dims));
    for (int d = 0; d < s.rank(); ++d)
      OPFORGE_RETURN_IF_ERROR(
          requireEq(c, z.dim(d), s.dim(d), "zero point must have the shape of the scale"));
  }
  return Status::ok();
}

// Run time: the layout of x (in[0]) against its scale (in[1]).
// The integer zero points of a Q/DQ op (empty when absent), or an error when an FP8 zero point,
// which must be 0 and is never read as integers (its bits may be NaN), is not. `what` names the
// input ("x_zero_point of an FP8 x").
inline Result<std::vector<int64_t>> quantZeroPoints(std::span<const Tensor> in, bool fp8,
                                                    const std::string& what) {
  if (!hasIn(in, 2)) return std::vector<int64_t>();
  if (!fp8) return readInts(in[2]);
  for (int64_t j = 0; j < in[2].numel(); ++j)
    if (const double v = loadAsDouble(in[2].data, in[2].desc.dtype, j); v != 0)
      return Status::invalid("input '" + what + " must be 0, got " + std::to_string(v) +
                             " at position " + std::to_string(j));
  return std::vector<int64_t>();
}

inline QuantLayout quantLayout(const TensorDesc& x, const TensorDesc& s, int64_t axis_attr,
                               int64_t block_size) {
  QuantLayout q;
  if (s.numel() == 1 && block_size == 0) {
    q.outer = x.numel();
    return q;
  }
  const int r = x.rank();
  const int axis = wrapAxis(axis_attr, r);
  q.outer = prodOf(x.dims, 0, axis);
  q.n = x.dims[axis];
  q.inner = prodOf(x.dims, axis + 1, r);
  if (block_size > 0) {
    q.bs = block_size;
    q.si = 1;
    q.sa = q.inner;
    q.so = s.dims[axis] * q.inner;
  } else {
    q.sa = 1;
  }
  return q;
}

}  // namespace opforge::ops
