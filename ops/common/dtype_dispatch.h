// dtype_dispatch.h — header-only helpers for CPU reference kernels: a numeric trait per storage
// type (half and bfloat16 compute in float) and a switch from DataType to that trait.
#pragma once

#include <cstdint>
#include <vector>

#include "opforge/op.h"

namespace opforge::ops {

// Num<T>: S = storage type, C = compute type.
template <typename T>
struct Num {
  using S = T;
  using C = T;
  static C load(S s) { return s; }
  static S store(C c) { return c; }
};
template <>
struct Num<half> {
  using S = uint16_t;
  using C = float;
  static C load(S s) { return halfToFloat(s); }
  static S store(C c) { return floatToHalf(c); }
};
template <>
struct Num<bfloat16> {
  using S = uint16_t;
  using C = float;
  static C load(S s) { return bf16ToFloat(s); }
  static S store(C c) { return floatToBf16(c); }
};
struct BoolTag {};
template <>
struct Num<BoolTag> {
  using S = uint8_t;
  using C = bool;
  static C load(S s) { return s != 0; }
  static S store(C c) { return c ? 1 : 0; }
};

// The bit of one data type in a TypeSet (0 for kUndefined and numbers opforge does not know).
constexpr unsigned typeBit(DataType t) {
  const auto v = static_cast<int32_t>(t);
  return v > 0 && v < 32 ? 1u << v : 0u;
}

// A set of data types: one bit per type, and the groups the ops name.
enum TypeSet : unsigned {
  kF32 = typeBit(DataType::kFloat32),
  kF16 = typeBit(DataType::kFloat16),
  kBF16 = typeBit(DataType::kBFloat16),
  kF64 = typeBit(DataType::kFloat64),
  kI8 = typeBit(DataType::kInt8),
  kI16 = typeBit(DataType::kInt16),
  kI32 = typeBit(DataType::kInt32),
  kI64 = typeBit(DataType::kInt64),
  kU8 = typeBit(DataType::kUInt8),
  kU16 = typeBit(DataType::kUInt16),
  kU32 = typeBit(DataType::kUInt32),
  kU64 = typeBit(DataType::kUInt64),
  kBools = typeBit(DataType::kBool),
  kF8E4M3 = typeBit(DataType::kFloat8E4M3),
  kF8E5M2 = typeBit(DataType::kFloat8E5M2),
  // FP8 is a storage type: no group below holds it, and visitTypes has no Num for it; the ops that
  // take it (Cast, CastLike, QuantizeLinear, DequantizeLinear) read and write it by value.
  kFp8 = kF8E4M3 | kF8E5M2,
  kFloats = kF32 | kF16 | kBF16 | kF64,
  kSigned = kI8 | kI16 | kI32 | kI64,
  kUnsigned = kU8 | kU16 | kU32 | kU64,
  kNumeric = kFloats | kSigned | kUnsigned,
  kAll = kNumeric | kBools,
};

inline bool inTypeSet(DataType t, unsigned set) {
  return (set & typeBit(t)) != 0;
}

// Calls f(Num<T>{}) for the storage type of `t`, if `t` is in `set`.
template <typename F>
Status visitType(DataType t, unsigned set, const char* op, F&& f) {
  if (!inTypeSet(t, set))
    return Status::unsupported(std::string(op) + " does not support " + dtypeName(t));
  switch (t) {
    case DataType::kFloat32:
      return f(Num<float>{});
    case DataType::kFloat16:
      return f(Num<half>{});
    case DataType::kBFloat16:
      return f(Num<bfloat16>{});
    case DataType::kFloat64:
      return f(Num<double>{});
    case DataType::kInt8:
      return f(Num<int8_t>{});
    case DataType::kInt16:
      return f(Num<int16_t>{});
    case DataType::kInt32:
      return f(Num<int32_t>{});
    case DataType::kInt64:
      return f(Num<int64_t>{});
    case DataType::kUInt8:
      return f(Num<uint8_t>{});
    case DataType::kUInt16:
      return f(Num<uint16_t>{});
    case DataType::kUInt32:
      return f(Num<uint32_t>{});
    case DataType::kUInt64:
      return f(Num<uint64_t>{});
    case DataType::kBool:
      return f(Num<BoolTag>{});
    default:
      return Status::unsupported(std::string(op) + " does not support " + dtypeName(t));
  }
}

// Like visitType, but the set is a compile-time constant: only the types in `Set` are
// instantiated (a kernel's scalar code need only compile for those).
template <unsigned Set, typename F>
Status visitTypes(DataType t, const char* op, F&& f) {
  switch (t) {
    case DataType::kFloat32:
      if constexpr ((Set & kF32) != 0) return f(Num<float>{});
      break;
    case DataType::kFloat16:
      if constexpr ((Set & kF16) != 0) return f(Num<half>{});
      break;
    case DataType::kBFloat16:
      if constexpr ((Set & kBF16) != 0) return f(Num<bfloat16>{});
      break;
    case DataType::kFloat64:
      if constexpr ((Set & kF64) != 0) return f(Num<double>{});
      break;
    case DataType::kInt8:
      if constexpr ((Set & kI8) != 0) return f(Num<int8_t>{});
      break;
    case DataType::kInt16:
      if constexpr ((Set & kI16) != 0) return f(Num<int16_t>{});
      break;
    case DataType::kInt32:
      if constexpr ((Set & kI32) != 0) return f(Num<int32_t>{});
      break;
    case DataType::kInt64:
      if constexpr ((Set & kI64) != 0) return f(Num<int64_t>{});
      break;
    case DataType::kUInt8:
      if constexpr ((Set & kU8) != 0) return f(Num<uint8_t>{});
      break;
    case DataType::kUInt16:
      if constexpr ((Set & kU16) != 0) return f(Num<uint16_t>{});
      break;
    case DataType::kUInt32:
      if constexpr ((Set & kU32) != 0) return f(Num<uint32_t>{});
      break;
    case DataType::kUInt64:
      if constexpr ((Set & kU64) != 0) return f(Num<uint64_t>{});
      break;
    case DataType::kBool:
      if constexpr ((Set & kBools) != 0) return f(Num<BoolTag>{});
      break;
    default:
      break;
  }
  return Status::unsupported(std::string(op) + " does not support " + dtypeName(t));
}

// Calls f(Num<T>{}) for a type of the same size as `t` (data movement: only the bytes matter).
template <typename F>
Status visitBySize(DataType t, const char* op, F&& f) {
  switch (dtypeSize(t)) {
    case 1:
      return f(Num<uint8_t>{});
    case 2:
      return f(Num<uint16_t>{});
    case 4:
      return f(Num<uint32_t>{});
    case 8:
      return f(Num<uint64_t>{});
    default:
      return Status::unsupported(std::string(op) + " does not support " + dtypeName(t));
  }
}

// Visits the output of a broadcast in runs along the (coalesced) innermost axis:
// f(out_offset, in_offsets, length, in_inner_strides) with one offset and stride per input.
template <typename F>
void forEachRun(const std::vector<int64_t>& out_dims,
                const std::vector<std::vector<int64_t>>& in_strides, F&& f) {
  const size_t k = in_strides.size();
  int64_t total = 1;
  for (int64_t d : out_dims) total *= d;
  if (total == 0) return;
  // Coalesce axes that are contiguous for the output and every input.
  std::vector<int64_t> dims;
  std::vector<std::vector<int64_t>> st(k);
  for (size_t a = 0; a < out_dims.size(); ++a) {
    if (out_dims[a] == 1) continue;
    bool merge = !dims.empty();
    for (size_t j = 0; j < k && merge; ++j) merge = st[j].back() == in_strides[j][a] * out_dims[a];
    if (merge) {
      dims.back() *= out_dims[a];
      for (size_t j = 0; j < k; ++j) st[j].back() = in_strides[j][a];
    } else {
      dims.push_back(out_dims[a]);
      for (size_t j = 0; j < k; ++j) st[j].push_back(in_strides[j][a]);
    }
  }
  std::vector<int64_t> off(k, 0), inner(k, 0);
  if (dims.empty()) {
    f(int64_t{0}, off.data(), int64_t{1}, inner.data());
    return;
  }
  const int r = static_cast<int>(dims.size());
  const int64_t len = dims[r - 1];
  for (size_t j = 0; j < k; ++j) inner[j] = st[j][r - 1];
  std::vector<int64_t> idx(r, 0);
  for (int64_t o = 0; o < total; o += len) {
    f(o, off.data(), len, inner.data());
    for (int a = r - 2; a >= 0; --a) {
      if (++idx[a] < dims[a]) {
        for (size_t j = 0; j < k; ++j) off[j] += st[j][a];
        break;
      }
      for (size_t j = 0; j < k; ++j) off[j] -= st[j][a] * (dims[a] - 1);
      idx[a] = 0;
    }
  }
}

// Row-major strides of `dims` (elements). Products wrap instead of overflowing: an empty tensor may
// have huge other dims ([0, 2^31 - 1, 2^31 - 1]) and strides no element is ever read through; a
// non-empty one fits (at most 2^40 elements).
inline std::vector<int64_t> stridesOf(const std::vector<int64_t>& dims) {
  std::vector<int64_t> s(dims.size(), 1);
  for (int i = static_cast<int>(dims.size()) - 2; i >= 0; --i)
    s[i] =
        static_cast<int64_t>(static_cast<uint64_t>(s[i + 1]) * static_cast<uint64_t>(dims[i + 1]));
  return s;
}

// Strides that read `in` broadcast to `out` (numpy rules, right-aligned; 0 on broadcast axes).
inline std::vector<int64_t> broadcastStrides(const std::vector<int64_t>& in,
                                             const std::vector<int64_t>& out) {
  std::vector<int64_t> s(out.size(), 0);
  auto is = stridesOf(in);
  const size_t off = out.size() - in.size();
  for (size_t a = 0; a < in.size(); ++a) s[off + a] = in[a] == 1 ? 0 : is[a];
  return s;
}

// Logical axis stored at memory position j of a tensor of `rank` in format f (opforge/tensor.h:
// channels-last (HWC) of rank >= 3 stores axis 1 innermost).
inline std::vector<int> memoryOrder(Format f, int rank) {
  std::vector<int> ord(rank);
  for (int j = 0; j < rank; ++j) ord[j] = j;
  if (f == Format::kHWC && rank >= 3) {
    for (int j = 1; j < rank - 1; ++j) ord[j] = j + 1;
    ord[rank - 1] = 1;
  }
  return ord;
}

// A broadcast read in y's memory order: y's dims in that order and, per input, the strides (in
// the input's own format, 0 on broadcast axes; numpy rules, right-aligned) along them. For LINEAR
// tensors it is y's dims and broadcastStrides.
struct MemoryBroadcast {
  std::vector<int64_t> dims;
  std::vector<std::vector<int64_t>> strides;
};
inline MemoryBroadcast memoryBroadcast(const TensorDesc& y,
                                       const std::vector<const TensorDesc*>& ins) {
  const int r = y.rank();
  const std::vector<int> yord = memoryOrder(y.format, r);
  MemoryBroadcast m;
  for (int j = 0; j < r; ++j) m.dims.push_back(y.dims[yord[j]]);
  for (const TensorDesc* x : ins) {
    const int xr = x->rank();
    const std::vector<int> xord = memoryOrder(x->format, xr);
    std::vector<int64_t> own(xr, 0);  // element stride of each logical axis of x
    uint64_t s = 1;
    for (int j = xr - 1; j >= 0; --j) {
      own[xord[j]] = static_cast<int64_t>(s);
      s *= static_cast<uint64_t>(x->dims[xord[j]]);
    }
    std::vector<int64_t> st(r, 0);
    for (int j = 0; j < r; ++j) {
      const int a = yord[j] - (r - xr);  // x's axis under y's axis yord[j]
      if (a >= 0 && x->dims[a] != 1) st[j] = own[a];
    }
    m.strides.push_back(std::move(st));
  }
  return m;
}

// Visits every output index of `out_dims`, giving the flat offsets into each broadcast input.
template <typename F>
void forEachBroadcast(const std::vector<int64_t>& out_dims,
                      const std::vector<std::vector<int64_t>>& in_strides, F&& f) {
  const int r = static_cast<int>(out_dims.size());
  int64_t total = 1;
  for (int64_t d : out_dims) total *= d;
  if (total == 0) return;
  std::vector<int64_t> idx(r, 0), off(in_strides.size(), 0);
  for (int64_t i = 0; i < total; ++i) {
    f(i, off);
    for (int a = r - 1; a >= 0; --a) {
      if (++idx[a] < out_dims[a]) {
        for (size_t k = 0; k < off.size(); ++k) off[k] += in_strides[k][a];
        break;
      }
      for (size_t k = 0; k < off.size(); ++k) off[k] -= in_strides[k][a] * (out_dims[a] - 1);
      idx[a] = 0;
    }
  }
}

// Symbolic numpy broadcasting of two shapes; undecidable pairs become assertions.
inline Result<std::vector<DimExpr>> broadcastShapes(ShapeContext& c, const std::vector<DimExpr>& a,
                                                    const std::vector<DimExpr>& b) {
  const size_t r = std::max(a.size(), b.size());
  std::vector<DimExpr> out(r);
  for (size_t i = 0; i < r; ++i) {
    const bool ha = i + a.size() >= r, hb = i + b.size() >= r;
    const DimExpr x = ha ? a[i + a.size() - r] : DimExpr(1);
    const DimExpr y = hb ? b[i + b.size() - r] : DimExpr(1);
    if (x.isConst() && x.constValue() == 1) {
      out[i] = y;
    } else if (y.isConst() && y.constValue() == 1) {
      out[i] = x;
    } else if (x.sameAs(y)) {
      out[i] = x;
    } else if (x.isConst() && y.isConst()) {
      return c.error("shapes " + toString(a) + " and " + toString(b) + " do not broadcast (axis " +
                     std::to_string(i) + ": " + x.toString() + " vs " + y.toString() + ")");
    } else {
      c.require(x, DimAssertion::Op::kBroadcast, y,
                "shapes " + toString(a) + " and " + toString(b) + " must broadcast at axis " +
                    std::to_string(i));
      out[i] = max(x, y);
    }
  }
  return out;
}

}  // namespace opforge::ops
