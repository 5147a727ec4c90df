// util.h — helpers shared by the built-in ONNX ops: axis checks, value inputs read at build time,
// integer inputs read at run time, index checks, importer-filled attributes.
#pragma once

#include <cmath>
#include <cstring>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "../../common/dtype_dispatch.h"

namespace opforge::ops {

// Attributes the ONNX importer fills for ops that declare them: the model's ai.onnx opset and the
// number of outputs the node lists (0 when the network was made through the C++ API).
inline OpDef& onnxOpsetAttr(OpDef& d) {
  return d.attr<int64_t>("_onnx_opset", int64_t{0}, "filled by the ONNX importer");
}
inline OpDef& onnxOutputsAttr(OpDef& d) {
  return d.attr<int64_t>("_onnx_num_outputs", int64_t{0}, "filled by the ONNX importer");
}
// The opset a node follows: the importer's value, else the newest.
inline int64_t opsetOf(const AttrMap& a) {
  int64_t v = a.get<int64_t>("_onnx_opset");
  return v > 0 ? v : 1000;
}

// An Unsupported status naming the node, the op and the dtype.
inline Status unsupportedType(const ShapeContext& c, const std::string& what, DataType t) {
  return Status::unsupported("node '" + c.nodeName() + "' (" + c.opKey() + "): " + what +
                             " has data type " + dtypeName(t) + ", which this op does not support");
}
inline Status checkType(const ShapeContext& c, const std::string& what, DataType t, unsigned set) {
  return inTypeSet(t, set) ? Status::ok() : unsupportedType(c, what, t);
}
inline bool isIntIndex(DataType t) {
  return t == DataType::kInt32 || t == DataType::kInt64;
}

// Normalises an axis in [-rank, rank) to [0, rank).
inline Result<int> normAxis(const ShapeContext& c, int64_t axis, int rank,
                            const std::string& what = "axis") {
  if (axis < -rank || axis >= rank)
    return c.error(what + " " + std::to_string(axis) + " is out of range for an input of rank " +
                   std::to_string(rank) + " (valid: " + std::to_string(-rank) + " to " +
                   std::to_string(rank - 1) + ")");
  return static_cast<int>(axis < 0 ? axis + rank : axis);
}
// Normalises a list of axes; rejects duplicates.
inline Result<std::vector<int>> normAxes(const ShapeContext& c, const std::vector<int64_t>& axes,
                                         int rank, const std::string& what = "axes") {
  std::vector<int> out;
  for (int64_t a : axes) {
    OPFORGE_ASSIGN_OR_RETURN(int n, normAxis(c, a, rank, what + " value"));
    for (int o : out)
      if (o == n) return c.error(what + " lists axis " + std::to_string(n) + " twice");
    out.push_back(n);
  }
  return out;
}
inline int wrapAxis(int64_t axis, int rank) {
  return static_cast<int>(axis < 0 ? axis + rank : axis);
}

// Integer values of value input `i` (a constant, or computed from shapes), or an error that says
// they must be known when the network is built.
inline Result<std::vector<DimExpr>> needValue(const ShapeContext& c, int i,
                                              const std::string& what) {
  auto v = c.value(i);
  if (!v)
    return c.error(
        "input '" + what +
        "' must be known when the network is built (a constant, or computed from input shapes); "
        "opforge does not take it from run-time data");
  return *v;
}
// Concrete integers of value input `i`.
inline Result<std::vector<int64_t>> needInts(const ShapeContext& c, int i,
                                             const std::string& what) {
  OPFORGE_ASSIGN_OR_RETURN(auto v, needValue(c, i, what));
  std::vector<int64_t> out;
  for (const auto& d : v) {
    if (!d.isConst())
      return c.error("input '" + what + "' must be a constant when the network is built; it is " +
                     toString(v));
    out.push_back(d.constValue());
  }
  return out;
}
// Numbers (any numeric dtype) of a constant value input `i`.
inline Result<std::vector<double>> needNumbers(const ShapeContext& c, int i,
                                               const std::string& what) {
  const TensorValue* t = c.constant(i);
  if (!t) {
    if (auto v = c.value(i)) {
      std::vector<double> out;
      for (const auto& d : *v) {
        if (!d.isConst())
          return c.error("input '" + what + "' must be a constant when the network is built");
        out.push_back(static_cast<double>(d.constValue()));
      }
      return out;
    }
    return c.error("input '" + what +
                   "' must be a constant when the network is built; opforge does not take it "
                   "from run-time data");
  }
  std::vector<double> out(t->desc.numel());
  for (int64_t k = 0; k < t->desc.numel(); ++k)
    out[k] = loadAsDouble(t->data.data(), t->desc.dtype, k);
  return out;
}

// Run time: whether optional input i is present.
inline bool hasIn(std::span<const Tensor> in, size_t i) {
  return i < in.size() && in[i].desc.dtype != DataType::kUndefined;
}

// Run time: the integers of an INT32/INT64 (or any numeric) tensor.
inline std::vector<int64_t> readInts(const Tensor& t) {
  std::vector<int64_t> v(t.numel());
  if (t.desc.dtype == DataType::kInt64) {
    if (!v.empty()) std::memcpy(v.data(), t.data, v.size() * 8);
  } else if (t.desc.dtype == DataType::kInt32) {
    for (size_t k = 0; k < v.size(); ++k) v[k] = static_cast<const int32_t*>(t.data)[k];
  } else {
    for (size_t k = 0; k < v.size(); ++k)
      v[k] = static_cast<int64_t>(loadAsDouble(t.data, t.desc.dtype, k));
  }
  return v;
}
inline std::vector<double> readDoubles(const Tensor& t) {
  std::vector<double> v(t.numel());
  for (size_t k = 0; k < v.size(); ++k) v[k] = loadAsDouble(t.data, t.desc.dtype, k);
  return v;
}
inline int64_t readIndex(const void* p, DataType t, int64_t i) {
  return t == DataType::kInt64 ? static_cast<const int64_t*>(p)[i]
                               : static_cast<const int32_t*>(p)[i];
}

// An index in [-n, n) made non-negative; false when out of range.
inline bool normIndex(int64_t& i, int64_t n) {
  if (i < -n || i >= n) return false;
  if (i < 0) i += n;
  return true;
}
inline Status indexError(const std::string& input, int64_t value, int64_t position, int64_t n,
                         int axis) {
  return Status::outOfRange("input '" + input + "' holds " + std::to_string(value) +
                            " at position " + std::to_string(position) + ", outside [" +
                            std::to_string(-n) + ", " + std::to_string(n - 1) + "] (axis " +
                            std::to_string(axis) + " has size " + std::to_string(n) + ")");
}

// Product of dims[from, to).
inline int64_t prodOf(const std::vector<int64_t>& d, int from, int to) {
  int64_t p = 1;
  for (int i = from; i < to; ++i) p *= d[i];
  return p;
}
inline DimExpr symProd(const std::vector<DimExpr>& d, int from, int to) {
  DimExpr p = 1;
  for (int i = from; i < to; ++i) p = p * d[i];
  return p;
}
inline bool isConstEq(const DimExpr& d, int64_t v) {
  return d.isConst() && d.constValue() == v;
}

// Requires a == b, failing at once when both are constants and differ.
inline Status requireEq(ShapeContext& c, const DimExpr& a, const DimExpr& b,
                        const std::string& what) {
  if (a.sameAs(b)) return Status::ok();
  if (a.isConst() && b.isConst())
    return c.error(what + " (" + a.toString() + " vs " + b.toString() + ")");
  c.require(a, DimAssertion::Op::kEq, b, what);
  return Status::ok();
}

// The largest tensor a shape rule accepts (elements); beyond it dimensions are treated as
// overflowing (the byte count of any dtype still fits in 64 bits).
constexpr int64_t kMaxElements = int64_t{1} << 40;

// Rejects negative dimensions and element counts that overflow; symbolic shapes get a check at
// every concrete shape. `what` names the tensor ("output", "input 'shape'").
inline Status checkElementCount(ShapeContext& c, const std::vector<DimExpr>& dims,
                                const std::string& what) {
  int64_t n = 1;
  bool all_const = true;
  for (const auto& d : dims) {
    if (!d.isConst()) {
      all_const = false;
      continue;
    }
    if (d.constValue() < 0)
      return c.error(what + " " + toString(dims) + " has the negative dimension " + d.toString());
    if (__builtin_mul_overflow(n, d.constValue(), &n) || n > kMaxElements)
      return c.error(what + " " + toString(dims) +
                     " has more than 2^40 elements (the dimensions overflow)");
  }
  if (!all_const)
    c.require(product(dims), DimAssertion::Op::kLe, kMaxElements,
              what + " " + toString(dims) + " must have at most 2^40 elements");
  return Status::ok();
}

// Reads element `i` of a float tensor as the compute type; writes back.
template <typename N>
inline const typename N::S* ptrOf(const Tensor& t) {
  return static_cast<const typename N::S*>(t.data);
}
template <typename N>
inline typename N::S* mutPtr(const Tensor& t) {
  return static_cast<typename N::S*>(t.data);
}

}  // namespace opforge::ops
