// binary.h — shared definition of ONNX's broadcasting binary ops (Add, Mul, Equal, And, ...): one
// shape rule and one CPU reference parameterised by the scalar function.
#pragma once

#include <functional>

#include "broadcast_check.h"
#include "combos.h"
#include "util.h"

namespace opforge::ops {

// Symbolic value propagation for shape arithmetic: f(a, b) -> result, or nullopt if unknown.
using SymBinaryFn = std::function<std::optional<DimExpr>(const DimExpr&, const DimExpr&)>;

// Elementwise values of a broadcasting op on two small 0-D/1-D value lists.
inline std::optional<std::vector<DimExpr>> broadcastValues(const std::vector<DimExpr>& a,
                                                           const std::vector<DimExpr>& b,
                                                           const SymBinaryFn& f) {
  if (a.size() != b.size() && a.size() != 1 && b.size() != 1) return std::nullopt;
  // [0] against [1] broadcasts to [0] (a fuzzer finding: the empty side was indexed).
  const size_t n = a.empty() || b.empty() ? 0 : std::max(a.size(), b.size());
  std::vector<DimExpr> out;
  for (size_t i = 0; i < n; ++i) {
    auto r = f(a[a.size() == 1 ? 0 : i], b[b.size() == 1 ? 0 : i]);
    if (!r) return std::nullopt;
    out.push_back(*r);
  }
  return out;
}

// The output shape of a broadcasting op on inputs `ins` (type checks are the caller's).
inline Result<std::vector<DimExpr>> broadcastAll(ShapeContext& c, const std::vector<SymDesc>& ins) {
  std::vector<DimExpr> dims = ins[0].dims;
  for (size_t i = 1; i < ins.size(); ++i) {
    OPFORGE_ASSIGN_OR_RETURN(dims, broadcastShapes(c, dims, ins[i].dims));
  }
  return dims;
}

// Kernel body: y[i] = f(a[i], b[i]) over the broadcast, with storage types NA, NB -> NY.
template <typename NA, typename NB, typename NY, typename F>
void broadcastBinary(const Tensor& a, const Tensor& b, const Tensor& y, F&& f) {
  const auto* pa = ptrOf<NA>(a);
  const auto* pb = ptrOf<NB>(b);
  auto* py = mutPtr<NY>(y);
  const MemoryBroadcast m = memoryBroadcast(y.desc, {&a.desc, &b.desc});  // any formats
  forEachRun(m.dims, m.strides, [&](int64_t o, const int64_t* off, int64_t n, const int64_t* st) {
    const auto* xa = pa + off[0];
    const auto* xb = pb + off[1];
    auto* out = py + o;
    const int64_t sa = st[0], sb = st[1];
    for (int64_t i = 0; i < n; ++i)
      out[i] =
          NY::store(static_cast<typename NY::C>(f(NA::load(xa[i * sa]), NB::load(xb[i * sb]))));
  });
}

// The CPU reference of a broadcasting binary op: y = f(a, b) (see defineBinary; y's shape is the
// broadcast of a's and b's, its type theirs or BOOL). Also what fused ops' references call.
template <unsigned Types, bool kBoolOut = false, typename F, typename Check = std::nullptr_t>
Status binaryReference(const char* name, F f, Check check, const Tensor& a, const Tensor& b,
                       const Tensor& y) {
  OPFORGE_RETURN_IF_ERROR(checkBroadcast(a.desc.dims, y.desc.dims, name));
  OPFORGE_RETURN_IF_ERROR(checkBroadcast(b.desc.dims, y.desc.dims, name));
  return visitTypes<Types>(a.desc.dtype, name, [&](auto num) -> Status {
    using N = decltype(num);
    if constexpr (!std::is_same_v<Check, std::nullptr_t>) {
      const auto* pb = ptrOf<N>(b);
      for (int64_t i = 0; i < b.numel(); ++i)
        if (!check(N::load(pb[i])))
          return Status::runtime(std::string(name) + ": input 'B' holds " +
                                 std::to_string(static_cast<double>(N::load(pb[i]))) +
                                 " at position " + std::to_string(i) +
                                 ", which is not allowed here (integer division by zero)");
    }
    if constexpr (kBoolOut)
      broadcastBinary<N, N, Num<BoolTag>>(a, b, y, f);
    else
      broadcastBinary<N, N, N>(a, b, y, f);
    return Status::ok();
  });
}

// A broadcasting binary op: both inputs of one type in `Types`; the output has that type, or BOOL
// when `kBoolOut`. f(C, C) -> C (or bool); a failing check(C, C) reports a run-time error (integer
// division by zero). `sym` propagates shape values (Shape -> Mul -> Reshape chains).
template <unsigned Types, bool kBoolOut = false, typename F, typename Check = std::nullptr_t>
OpDef& defineBinary(OpDef& def, const char* name, F f, SymBinaryFn sym = nullptr,
                    Check check = nullptr) {
  if (sym)
    def.valueInput("A").valueInput("B");
  else
    def.input("A").input("B");
  return def.output("C")
      .combos(kBoolOut ? comboTypes(Types) + ", " + comboTypes(Types) + ", BOOL"
                       : comboTypes(Types))
      // Channels-last: the CUDA tactic (1) broadcasts in any formats; the reference too.
      .combo(Combo(kBoolOut ? comboTypes(Types) + ", " + comboTypes(Types) + ", BOOL"
                            : comboTypes(Types),
                   "HWC")
                 .tactics({1}))
      .shape([name, sym](ShapeContext& c) -> Result<SymDesc> {
        SymDesc a = c.input(0), b = c.input(1);
        if (a.dtype != b.dtype)
          return c.error(std::string("inputs 'A' and 'B' must have one type, got ") +
                         dtypeName(a.dtype) + " and " + dtypeName(b.dtype));
        OPFORGE_RETURN_IF_ERROR(checkType(c, "input 'A'", a.dtype, Types));
        OPFORGE_ASSIGN_OR_RETURN(auto dims, broadcastShapes(c, a.dims, b.dims));
        if (sym && dims.size() <= 1 && isIntIndex(a.dtype)) {
          auto va = c.value(0), vb = c.value(1);
          if (va && vb)
            if (auto v = broadcastValues(*va, *vb, sym)) c.setValue(0, std::move(*v));
        }
        return SymDesc::make(kBoolOut ? DataType::kBool : a.dtype, std::move(dims));
      })
      .cpu([name, f, check](KernelContext&, std::span<const Tensor> in,
                            std::span<const Tensor> out) -> Status {
        return binaryReference<Types, kBoolOut>(name, f, check, in[0], in[1], out[0]);
      })
      .elementwise();
}

// A definition fragment. Usage:
//   OPFORGE_OP(Add, "ai.onnx::Add").with(binaryOp<kNumeric>("Add", [](auto x, auto y) { return x +
//   y; }));
template <unsigned Types, typename F>
auto binaryOp(const char* name, F f, SymBinaryFn sym = nullptr) {
  return [=](OpDef& def) { defineBinary<Types>(def, name, f, sym); };
}
// A lower bound of e over every binding, or nullopt. Symbols are dimensions and data-dependent
// sizes, so they are >= 0; the rest follows the operations (a bound that would overflow is
// unknown).
inline std::optional<int64_t> lowerBound(const DimExpr& e) {
  using K = DimExpr::Kind;
  switch (e.kind()) {
    case K::kConst:
      return e.constValue();
    case K::kSymbol:
      return 0;
    default:
      break;
  }
  auto a = lowerBound(e.lhs()), b = lowerBound(e.rhs());
  int64_t r = 0;
  switch (e.kind()) {
    case K::kAdd:
      if (a && b && !__builtin_add_overflow(*a, *b, &r)) return r;
      return std::nullopt;
    case K::kSub:  // a - b >= lb(a) - b only for a constant b
      if (a && e.rhs().isConst() && !__builtin_sub_overflow(*a, e.rhs().constValue(), &r)) return r;
      return std::nullopt;
    case K::kMul:
      if (a && b && *a >= 0 && *b >= 0 && !__builtin_mul_overflow(*a, *b, &r)) return r;
      return std::nullopt;
    case K::kFloorDiv:
    case K::kCeilDiv:
      if (a && *a >= 0 && e.rhs().isConst() && e.rhs().constValue() > 0)
        return e.kind() == K::kFloorDiv ? *a / e.rhs().constValue()
                                        : (*a + e.rhs().constValue() - 1) / e.rhs().constValue();
      // A non-negative quotient of non-negative terms (a zero divisor is no valid binding: the
      // evaluation fails): Reshape's -1 of a dynamic shape, floordiv(x.0*x.1, x.1).
      if (a && *a >= 0 && b && *b >= 0) return 0;
      return std::nullopt;
    case K::kMin:
      if (a && b) return std::min(*a, *b);
      return std::nullopt;
    case K::kMax:
      if (a && b) return std::max(*a, *b);
      return a ? a : b;
    default:
      return std::nullopt;
  }
}

// Comparisons of shape values where every binding agrees (1 or 0), else nullopt: Equal of a
// dimension and -1 is false (the TorchScript exporter's `expand(batch, -1, -1)` asks exactly that).
enum class SymCmp { kEq, kLt, kLe, kGt, kGe };
inline std::optional<DimExpr> symCompare(SymCmp op, const DimExpr& a, const DimExpr& b) {
  // sign of a - b: known exactly, or bounded below by lowerBound(a - b) / above by -lb(b - a).
  const DimExpr d = a - b;
  std::optional<int64_t> lo = lowerBound(d), nhi = lowerBound(b - a);  // a-b >= lo, a-b <= -nhi
  if (a.sameAs(b)) lo = nhi = 0;
  const bool pos = lo && *lo > 0, nonneg = lo && *lo >= 0;
  const bool neg = nhi && *nhi > 0, nonpos = nhi && *nhi >= 0;
  std::optional<bool> r;
  switch (op) {
    case SymCmp::kEq:
      if (nonneg && nonpos)
        r = true;
      else if (pos || neg)
        r = false;
      break;
    case SymCmp::kLt:
      if (neg)
        r = true;
      else if (nonneg)
        r = false;
      break;
    case SymCmp::kLe:
      if (nonpos)
        r = true;
      else if (pos)
        r = false;
      break;
    case SymCmp::kGt:
      if (pos)
        r = true;
      else if (nonpos)
        r = false;
      break;
    case SymCmp::kGe:
      if (nonneg)
        r = true;
      else if (neg)
        r = false;
      break;
  }
  if (!r) return std::nullopt;
  return DimExpr(int64_t{*r ? 1 : 0});
}

// Comparison and logic ops: BOOL output. With `cmp`, comparisons of shape values propagate.
template <unsigned Types, typename F>
auto compareOp(const char* name, F f, std::optional<SymCmp> cmp = std::nullopt) {
  SymBinaryFn sym;
  if (cmp) sym = [op = *cmp](const DimExpr& a, const DimExpr& b) { return symCompare(op, a, b); };
  return [=](OpDef& def) { defineBinary<Types, true>(def, name, f, sym); };
}

}  // namespace opforge::ops
