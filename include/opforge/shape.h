// opforge/shape.h — symbolic dimensions.
//
// A DimExpr is an integer expression over named symbols: a network input's dynamic dimension
// ("x.0" = input x, axis 0) or the value of a size tensor ("<node>#0", known only once the node has
// run). Shape rules build output dimensions out of input dimensions with + - * floorDiv ceilDiv
// min max and constants, so one rule serves every optimization profile, the engine's allocation,
// ONNX value_info and PyTorch fake kernels.
//
// DimExpr is an immutable value (a shared expression tree); copying is cheap. Constructors fold
// constants and the identities x+0, x*1, x*0, x-x, floorDiv(x,1), min(x,x), max(a,min(a,x)) = a,
// max(a,max(a,x)) = max(a,x) (and the same with min and max swapped), max(e,0) = e and min(e,0) =
// 0 for e built from symbols (never negative: dimensions and sizes), so static shapes stay plain
// numbers and the broadcasts exporters write collapse to the dimension they broadcast.
//
// Usage:
//   DimExpr n = DimExpr::symbol("x.0");
//   DimExpr out = n * 2 + 4;                       // "x.0*2+4"
//   auto v = out.eval([](const std::string& s) -> std::optional<int64_t> { return 3; });  // 10
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "opforge/status.h"

namespace opforge {

class DimExpr {
 public:
  enum class Kind : uint8_t { kConst, kSymbol, kAdd, kSub, kMul, kFloorDiv, kCeilDiv, kMin, kMax };

  DimExpr() : DimExpr(int64_t{0}) {}
  DimExpr(int64_t v);  // NOLINT(google-explicit-constructor): constants mix freely with symbols
  DimExpr(int v) : DimExpr(static_cast<int64_t>(v)) {}  // NOLINT(google-explicit-constructor)
  static DimExpr symbol(std::string name);
  static DimExpr binary(Kind k, const DimExpr& a, const DimExpr& b);

  Kind kind() const;
  bool isConst() const { return kind() == Kind::kConst; }
  // The constant's value; 0 for a non-constant expression.
  int64_t constValue() const;
  const std::string& symbolName() const;  // for kSymbol
  const DimExpr& lhs() const;             // for binary kinds
  const DimExpr& rhs() const;

  using Lookup = std::function<std::optional<int64_t>(const std::string&)>;
  // Evaluates with symbol values from `lookup`. Errors: an unbound symbol, a division by zero.
  Result<int64_t> eval(const Lookup& lookup) const;

  // Structural equality (after the constructors' folding): a.sameAs(b) means equal for every
  // binding; !sameAs does not mean unequal.
  bool sameAs(const DimExpr& other) const;
  void collectSymbols(std::set<std::string>& out) const;
  bool dependsOn(const std::string& symbol) const;
  // Replaces symbols by expressions (unmapped symbols stay).
  DimExpr substitute(const std::function<std::optional<DimExpr>(const std::string&)>& f) const;
  // Infix text: "x.0*2+4", "floordiv(x.1,2)", "min(a,b)".
  std::string toString() const;

 private:
  struct Node;
  explicit DimExpr(std::shared_ptr<const Node> n) : n_(std::move(n)) {}
  std::shared_ptr<const Node> n_;
};

DimExpr operator+(const DimExpr& a, const DimExpr& b);
DimExpr operator-(const DimExpr& a, const DimExpr& b);
DimExpr operator*(const DimExpr& a, const DimExpr& b);
inline DimExpr& operator+=(DimExpr& a, const DimExpr& b) {
  return a = a + b;
}
inline DimExpr& operator-=(DimExpr& a, const DimExpr& b) {
  return a = a - b;
}
inline DimExpr& operator*=(DimExpr& a, const DimExpr& b) {
  return a = a * b;
}
DimExpr floorDiv(const DimExpr& a, const DimExpr& b);
DimExpr ceilDiv(const DimExpr& a, const DimExpr& b);
DimExpr min(const DimExpr& a, const DimExpr& b);
DimExpr max(const DimExpr& a, const DimExpr& b);

// Product of dims, "[a, b, c]" text, and evaluation of a whole shape.
DimExpr product(const std::vector<DimExpr>& dims);
std::string toString(const std::vector<DimExpr>& dims);
Result<std::vector<int64_t>> evalDims(const std::vector<DimExpr>& dims, const DimExpr::Lookup& f);

// A relation the shape rule could not decide symbolically and that must hold for every concrete
// shape (checked at build for each profile point and at run time whenever shapes are set).
struct DimAssertion {
  // kEq: lhs == rhs; kLe: lhs <= rhs; kBroadcast: lhs == rhs, or either is 1 and the other is
  // not 0. (A shape rule that can not decide a broadcast symbolically gives max(lhs, rhs), which
  // is exact in every case this accepts; 1-against-0, valid in numpy, is refused with a clear
  // error rather than computed wrongly.)
  enum class Op : uint8_t { kEq, kLe, kBroadcast };
  bool holds(int64_t l, int64_t r) const {
    return op == Op::kEq   ? l == r
           : op == Op::kLe ? l <= r
                           : (l == r || (l == 1 && r != 0) || (r == 1 && l != 0));
  }
  DimExpr lhs;
  Op op = Op::kEq;
  DimExpr rhs;
  std::string message;  // names what breaks, e.g. "Add: dim 0 of A (x.0) must equal dim 0 of B"
};

}  // namespace opforge
