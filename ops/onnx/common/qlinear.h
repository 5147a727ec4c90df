// qlinear.h — what ConvInteger, QLinearConv, MatMulInteger and QLinearMatMul share: 8-bit operands
// minus their zero points as doubles, accumulated on the FP64 Conv / MatMul references (exact: a
// product is below 2^16 in magnitude, so a sum of fewer than 2^37 of them is exact), and the
// requantization of the QLinear ops as ONNX Runtime's CPU kernels (MLAS) and TensorRT compute it:
// y = saturate(round_half_even(fp32(acc) * m) + y_zero_point), the product in FP32, with the
// multiplier m = (s_a * s_b) / s_y rounded in the scales' type after each step. ONNX's numpy
// reference computes acc * m + y_zero_point in FP64 before rounding; the two differ only where a
// value lies within FP32's rounding of a tie (k + 0.5), or on a tie with an odd zero point.
#pragma once

#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include "util.h"

namespace opforge::ops {

constexpr unsigned kQ8 = kI8 | kU8;

// An FP64 tensor that owns its values (not copyable: t.data points into v).
struct F64Tensor {
  std::vector<double> v;
  Tensor t;
  explicit F64Tensor(std::vector<int64_t> dims) {
    t.desc.dtype = DataType::kFloat64;
    t.desc.dims = std::move(dims);
    v.assign(static_cast<size_t>(t.desc.numel()), 0.0);
    t.data = v.data();
  }
  F64Tensor(const F64Tensor&) = delete;
  F64Tensor& operator=(const F64Tensor&) = delete;
};

// x minus its zero point as doubles: zp empty (none), of one element (per tensor), or of n
// elements where element i of x uses zp[(i / inner) % n] (per row, column or channel).
inline void minusZeroPoint(const Tensor& x, const std::vector<int64_t>& zp, int64_t inner,
                           F64Tensor& out) {
  const int64_t n = static_cast<int64_t>(zp.size());
  for (int64_t i = 0; i < x.numel(); ++i) {
    const double z = n == 0 ? 0.0 : static_cast<double>(zp[n == 1 ? 0 : (i / inner) % n]);
    out.v[i] = loadAsDouble(x.data, x.desc.dtype, i) - z;
  }
}

// v as type t stores it (FP32, FP16 and BF16 round; FP64 keeps it).
inline double roundAs(double v, DataType t) {
  alignas(8) unsigned char b[8] = {};
  storeFromDouble(b, t, 0, v);
  return loadAsDouble(b, t, 0);
}

// The multipliers (s_a * s_b) / s_y in the scales' type `t`, for every pair of a's and b's
// scales (a per-tensor side repeats): m[i * nb + j] for a's scale i and b's scale j. An infinite
// or NaN multiplier (a zero y_scale, scales that overflow) is an error naming the pair.
inline Result<std::vector<double>> qMultipliers(const std::vector<double>& sa,
                                                const std::vector<double>& sb, double sy,
                                                DataType t) {
  std::vector<double> m;
  m.reserve(sa.size() * sb.size());
  for (size_t i = 0; i < sa.size(); ++i)
    for (size_t j = 0; j < sb.size(); ++j) {
      const double v = roundAs(roundAs(sa[i] * sb[j], t) / sy, t);
      if (!std::isfinite(v))
        return Status::invalid("the requantization multiplier " + std::to_string(sa[i]) + " * " +
                               std::to_string(sb[j]) + " / " + std::to_string(sy) + " is " +
                               std::to_string(v) + " (scales must be finite, y_scale nonzero)");
      m.push_back(v);
    }
  return m;
}

// The requantized value: round_half_even(fp32(acc) * fp32(m)) + zy, not below `floor` (the zero
// point, for a Relu folded in: QuantizeLinear(Relu(v)) = max(QuantizeLinear(v), zero_point) for a
// positive scale), saturated to INT8 or UINT8.
inline double requantize(double acc, double m, double zy, DataType t, double floor = -1e300) {
  const float p = static_cast<float>(acc) * static_cast<float>(m);
  const bool s = t == DataType::kInt8;
  return std::clamp(std::max(std::nearbyint(static_cast<double>(p)) + zy, floor), s ? -128.0 : 0.0,
                    s ? 127.0 : 255.0);
}

// The internal attribute of QLinearConv / QLinearMatMul that the Q/DQ fusions set when a Relu
// stood between the product and its QuantizeLinear.
inline OpDef& qReluAttr(OpDef& d) {
  return d.attr<int64_t>("_relu", int64_t{0},
                         "set by the Q/DQ fusions: a Relu before the QuantizeLinear, applied as "
                         "max(y, y_zero_point)");
}

// An exact integer accumulation stored as INT32, wrapping as 32-bit accumulators do.
inline int32_t wrapInt32(double acc) {
  return static_cast<int32_t>(static_cast<uint32_t>(static_cast<int64_t>(acc)));
}

// Run time (the kernels of a loaded plan, whose shape rules need not have run): parameter
// `name` (in[i]) has one element or, where n > 0, n elements.
inline Status checkQCount(std::span<const Tensor> in, size_t i, const char* name, int64_t n) {
  const int64_t c = in[i].numel();
  if (c == 1 || (n > 0 && c == n)) return Status::ok();
  return Status::invalid(std::string("input '") + name + "' has " + std::to_string(c) +
                         " elements; it must have 1" +
                         (n > 0 ? " or " + std::to_string(n) : std::string()));
}

// Shape rule: input i, a quantization parameter named `name`, is per tensor (a scalar or of one
// element) or, where `n` is given, 1-D of n elements. Its type must be `t` (a zero point: its
// operand's type), or one of `types` when t is kUndefined.
inline Status checkQParam(ShapeContext& c, int i, const std::string& name, DataType t,
                          unsigned types, const std::optional<DimExpr>& n, const char* per) {
  const SymDesc p = c.input(i);
  if (t != DataType::kUndefined && p.dtype != t)
    return c.error("input '" + name + "' has type " + dtypeName(p.dtype) + ", not " + dtypeName(t));
  if (t == DataType::kUndefined)
    OPFORGE_RETURN_IF_ERROR(checkType(c, "input '" + name + "'", p.dtype, types));
  if (p.rank() == 0 || (p.rank() == 1 && isConstEq(p.dim(0), 1))) return Status::ok();
  if (!n || p.rank() != 1)
    return c.error("input '" + name + "' " + toString(p.dims) + " must be a scalar (per tensor)" +
                   (n ? std::string(" or 1-D ") + per : std::string()));
  return requireEq(c, p.dim(0), *n, "input '" + name + "' must be a scalar or 1-D " + per);
}

// Shape rule: inputs i and j (a scale and its zero point) have one element count.
inline Status sameCount(ShapeContext& c, int i, int j, const std::string& a, const std::string& b) {
  const SymDesc p = c.input(i), q = c.input(j);
  return requireEq(c, symProd(p.dims, 0, p.rank()), symProd(q.dims, 0, q.rank()),
                   "inputs '" + a + "' and '" + b + "' must have one element count");
}

}  // namespace opforge::ops
