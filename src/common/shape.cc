#include "opforge/shape.h"

#include <algorithm>
#include <limits>

namespace opforge {

struct DimExpr::Node {
  Kind kind;
  int64_t value = 0;
  std::string name;
  std::optional<DimExpr> a, b;  // set for binary kinds only
  Node(Kind k, int64_t v) : kind(k), value(v) {}
  Node(Kind k, std::string n) : kind(k), name(std::move(n)) {}
  Node(Kind k, DimExpr x, DimExpr y) : kind(k), a(std::move(x)), b(std::move(y)) {}
};

namespace {
constexpr int64_t kInt64Min = std::numeric_limits<int64_t>::min();

// Floor and ceiling division; false when the quotient does not fit (INT64_MIN / -1) or b is 0.
bool floorDivInt(int64_t a, int64_t b, int64_t& out) {
  if (b == 0 || (a == kInt64Min && b == -1)) return false;
  int64_t q = a / b;
  if ((a % b != 0) && ((a < 0) != (b < 0))) --q;
  out = q;
  return true;
}
bool ceilDivInt(int64_t a, int64_t b, int64_t& out) {
  if (b == 0 || (a == kInt64Min && b == -1)) return false;
  int64_t q = a / b;
  if ((a % b != 0) && ((a < 0) == (b < 0))) ++q;
  out = q;
  return true;
}

bool apply(DimExpr::Kind k, int64_t x, int64_t y, int64_t& out) {
  using K = DimExpr::Kind;
  switch (k) {
    case K::kAdd:
      return !__builtin_add_overflow(x, y, &out);
    case K::kSub:
      return !__builtin_sub_overflow(x, y, &out);
    case K::kMul:
      return !__builtin_mul_overflow(x, y, &out);
    case K::kFloorDiv:
      return floorDivInt(x, y, out);
    case K::kCeilDiv:
      return ceilDivInt(x, y, out);
    case K::kMin:
      out = std::min(x, y);
      return true;
    case K::kMax:
      out = std::max(x, y);
      return true;
    default:
      return false;
  }
}
}  // namespace

DimExpr::DimExpr(int64_t v) {
  // Small constants are shared: most dims are small numbers.
  static const std::shared_ptr<const Node> kSmall[] = {
      std::make_shared<Node>(Kind::kConst, int64_t{0}),
      std::make_shared<Node>(Kind::kConst, int64_t{1}),
      std::make_shared<Node>(Kind::kConst, int64_t{2})};
  if (v >= 0 && v <= 2) {
    n_ = kSmall[v];
  } else {
    n_ = std::make_shared<Node>(Kind::kConst, v);
  }
}

DimExpr DimExpr::symbol(std::string name) {
  return DimExpr(std::make_shared<Node>(Kind::kSymbol, std::move(name)));
}

DimExpr::Kind DimExpr::kind() const {
  return n_->kind;
}
int64_t DimExpr::constValue() const {
  return n_->kind == Kind::kConst ? n_->value : 0;
}
const std::string& DimExpr::symbolName() const {
  return n_->name;
}
const DimExpr& DimExpr::lhs() const {
  return *n_->a;
}
const DimExpr& DimExpr::rhs() const {
  return *n_->b;
}

namespace {

// Whether e >= 0 for every binding: symbols (dimensions, sizes) and non-negative constants under
// + * floorDiv ceilDiv min max (looked at to a depth of 32; deeper counts as unknown).
bool nonNegative(const DimExpr& e, int depth = 0) {
  if (depth > 32) return false;
  using K = DimExpr::Kind;
  switch (e.kind()) {
    case K::kConst:
      return e.constValue() >= 0;
    case K::kSymbol:
      return true;
    case K::kAdd:
    case K::kMul:
    case K::kFloorDiv:
    case K::kCeilDiv:
    case K::kMin:
    case K::kMax:
      return nonNegative(e.lhs(), depth + 1) && nonNegative(e.rhs(), depth + 1);
    default:
      return false;
  }
}

}  // namespace

DimExpr DimExpr::binary(Kind k, const DimExpr& a0, const DimExpr& b0) {
  DimExpr a = a0, b = b0;
  const bool commutative = k == Kind::kAdd || k == Kind::kMul || k == Kind::kMin || k == Kind::kMax;
  if (commutative && a.isConst() && !b.isConst()) std::swap(a, b);
  if (a.isConst() && b.isConst()) {
    int64_t out;
    if (apply(k, a.constValue(), b.constValue(), out)) return DimExpr(out);
  }
  if (b.isConst()) {
    const int64_t c = b.constValue();
    if ((k == Kind::kAdd || k == Kind::kSub) && c == 0) return a;
    if (k == Kind::kMul && c == 1) return a;
    if (k == Kind::kMul && c == 0) return DimExpr(int64_t{0});
    if ((k == Kind::kFloorDiv || k == Kind::kCeilDiv) && c == 1) return a;
    // (x + c1) + c2 -> x + (c1 + c2), and likewise for - and mixed forms
    // (every negation is checked: -INT64_MIN does not exist)
    if ((k == Kind::kAdd || k == Kind::kSub) &&
        (a.kind() == Kind::kAdd || a.kind() == Kind::kSub) && a.rhs().isConst()) {
      int64_t inner = a.rhs().constValue(), outer = c, sum = 0;
      const bool ok = (a.kind() == Kind::kAdd || !__builtin_sub_overflow(0, inner, &inner)) &&
                      (k == Kind::kAdd || !__builtin_sub_overflow(0, outer, &outer)) &&
                      !__builtin_add_overflow(inner, outer, &sum);
      if (ok) {
        if (sum >= 0) return binary(Kind::kAdd, a.lhs(), DimExpr(sum));
        if (sum != kInt64Min) return binary(Kind::kSub, a.lhs(), DimExpr(-sum));
      }
    }
    // (x * c1) / c2 -> x * (c1 / c2) where c2 divides c1 (floor or ceiling: exact); c2 > 0
    if ((k == Kind::kFloorDiv || k == Kind::kCeilDiv) && c > 0 && a.kind() == Kind::kMul &&
        a.rhs().isConst() && a.rhs().constValue() % c == 0)
      return binary(Kind::kMul, a.lhs(), DimExpr(a.rhs().constValue() / c));
    if (k == Kind::kMul && a.kind() == Kind::kMul && a.rhs().isConst()) {
      int64_t prod;
      if (!__builtin_mul_overflow(a.rhs().constValue(), c, &prod))
        return binary(Kind::kMul, a.lhs(), DimExpr(prod));
    }
  }
  if (a.sameAs(b)) {
    if (k == Kind::kSub) return DimExpr(int64_t{0});
    if (k == Kind::kMin || k == Kind::kMax) return a;
  }
  if (k == Kind::kMin || k == Kind::kMax) {
    const Kind dual = k == Kind::kMin ? Kind::kMax : Kind::kMin;
    auto has = [](const DimExpr& e, Kind kind, const DimExpr& x) {
      return e.kind() == kind && (e.lhs().sameAs(x) || e.rhs().sameAs(x));
    };
    // Absorption: max(a, min(a, x)) = a, min(a, max(a, x)) = a.
    if (has(b, dual, a)) return a;
    if (has(a, dual, b)) return b;
    // Repetition: max(a, max(a, x)) = max(a, x).
    if (has(b, k, a)) return b;
    if (has(a, k, b)) return a;
    // Symbols are dimensions or sizes, never negative: max(e, 0) = e, min(e, 0) = 0.
    if (b.isConst() && b.constValue() == 0 && nonNegative(a)) return k == Kind::kMax ? a : b;
    // Nothing exceeds INT64_MAX: min(e, INT64_MAX) = e (a Slice's open end clamped to a size;
    // DeBERTa-v2's TorchScript export compares such a size with the plain one in an If).
    if (b.isConst() && b.constValue() == std::numeric_limits<int64_t>::max())
      return k == Kind::kMin ? a : b;
    // One expression plus two constants, for any value of it: min(x, x + 3) = x,
    // max(x - 1, x + 2) = x + 2 (Mamba's TorchScript export: min(seq, seq + 3)).
    auto offset = [](const DimExpr& e, DimExpr& base) -> std::optional<int64_t> {
      base = e;
      if (e.isConst() || (e.kind() != Kind::kAdd && e.kind() != Kind::kSub) || !e.rhs().isConst())
        return int64_t{0};
      const int64_t c = e.rhs().constValue();
      if (e.kind() == Kind::kSub && c == kInt64Min) return std::nullopt;
      base = e.lhs();
      return e.kind() == Kind::kAdd ? c : -c;
    };
    DimExpr base_a, base_b;
    const auto ca = offset(a, base_a), cb = offset(b, base_b);
    if (ca && cb && !base_a.isConst() && base_a.sameAs(base_b))
      return (k == Kind::kMin) == (*ca <= *cb) ? a : b;
  }
  // (x + c) - x -> c
  if (k == Kind::kSub && a.kind() == Kind::kAdd && a.lhs().sameAs(b)) return a.rhs();
  // (x * y) / x -> y (floor or ceiling: the quotient is exact), x / x -> 1: wherever the division
  // is defined (x != 0). A Reshape(-1) folds [B, 4] into B * 4, and exporters divide by B again
  // (timm's GCViT: Tile's repeats).
  if ((k == Kind::kFloorDiv || k == Kind::kCeilDiv) && !b.isConst()) {
    if (a.sameAs(b)) return DimExpr(int64_t{1});
    if (a.kind() == Kind::kMul && a.lhs().sameAs(b)) return a.rhs();
    if (a.kind() == Kind::kMul && a.rhs().sameAs(b)) return a.lhs();
  }
  return DimExpr(std::make_shared<Node>(k, a, b));
}

DimExpr operator+(const DimExpr& a, const DimExpr& b) {
  return DimExpr::binary(DimExpr::Kind::kAdd, a, b);
}
DimExpr operator-(const DimExpr& a, const DimExpr& b) {
  return DimExpr::binary(DimExpr::Kind::kSub, a, b);
}
DimExpr operator*(const DimExpr& a, const DimExpr& b) {
  return DimExpr::binary(DimExpr::Kind::kMul, a, b);
}
DimExpr floorDiv(const DimExpr& a, const DimExpr& b) {
  return DimExpr::binary(DimExpr::Kind::kFloorDiv, a, b);
}
DimExpr ceilDiv(const DimExpr& a, const DimExpr& b) {
  return DimExpr::binary(DimExpr::Kind::kCeilDiv, a, b);
}
DimExpr min(const DimExpr& a, const DimExpr& b) {
  return DimExpr::binary(DimExpr::Kind::kMin, a, b);
}
DimExpr max(const DimExpr& a, const DimExpr& b) {
  return DimExpr::binary(DimExpr::Kind::kMax, a, b);
}

Result<int64_t> DimExpr::eval(const Lookup& lookup) const {
  switch (n_->kind) {
    case Kind::kConst:
      return n_->value;
    case Kind::kSymbol: {
      auto v = lookup ? lookup(n_->name) : std::nullopt;
      if (!v) return Status::invalid("dimension symbol '" + n_->name + "' has no value");
      return *v;
    }
    default:
      break;
  }
  OPFORGE_ASSIGN_OR_RETURN(int64_t x, n_->a->eval(lookup));
  OPFORGE_ASSIGN_OR_RETURN(int64_t y, n_->b->eval(lookup));
  int64_t out;
  if (!apply(n_->kind, x, y, out)) {
    if ((n_->kind == Kind::kFloorDiv || n_->kind == Kind::kCeilDiv) && y == 0)
      return Status::invalid("division by zero in dimension expression " + toString());
    return Status::outOfRange("integer overflow in dimension expression " + toString());
  }
  return out;
}

bool DimExpr::sameAs(const DimExpr& o) const {
  if (n_ == o.n_) return true;
  if (n_->kind != o.n_->kind) return false;
  switch (n_->kind) {
    case Kind::kConst:
      return n_->value == o.n_->value;
    case Kind::kSymbol:
      return n_->name == o.n_->name;
    default:
      return n_->a->sameAs(*o.n_->a) && n_->b->sameAs(*o.n_->b);
  }
}

void DimExpr::collectSymbols(std::set<std::string>& out) const {
  if (n_->kind == Kind::kConst) return;
  if (n_->kind == Kind::kSymbol) {
    out.insert(n_->name);
    return;
  }
  n_->a->collectSymbols(out);
  n_->b->collectSymbols(out);
}

bool DimExpr::dependsOn(const std::string& s) const {
  if (n_->kind == Kind::kConst) return false;
  if (n_->kind == Kind::kSymbol) return n_->name == s;
  return n_->a->dependsOn(s) || n_->b->dependsOn(s);
}

DimExpr DimExpr::substitute(
    const std::function<std::optional<DimExpr>(const std::string&)>& f) const {
  if (n_->kind == Kind::kConst) return *this;
  if (n_->kind == Kind::kSymbol) {
    auto r = f(n_->name);
    return r ? *r : *this;
  }
  return binary(n_->kind, n_->a->substitute(f), n_->b->substitute(f));
}

std::string DimExpr::toString() const {
  switch (n_->kind) {
    case Kind::kConst:
      return std::to_string(n_->value);
    case Kind::kSymbol:
      return n_->name;
    case Kind::kAdd:
      return n_->a->toString() + "+" + n_->b->toString();
    case Kind::kSub: {
      std::string r = n_->b->toString();
      if (n_->b->kind() == Kind::kAdd || n_->b->kind() == Kind::kSub) r = "(" + r + ")";
      return n_->a->toString() + "-" + r;
    }
    case Kind::kMul: {
      auto wrap = [](const DimExpr& e) {
        std::string s = e.toString();
        return (e.kind() == Kind::kAdd || e.kind() == Kind::kSub) ? "(" + s + ")" : s;
      };
      return wrap(*n_->a) + "*" + wrap(*n_->b);
    }
    case Kind::kFloorDiv:
      return "floordiv(" + n_->a->toString() + "," + n_->b->toString() + ")";
    case Kind::kCeilDiv:
      return "ceildiv(" + n_->a->toString() + "," + n_->b->toString() + ")";
    case Kind::kMin:
      return "min(" + n_->a->toString() + "," + n_->b->toString() + ")";
    case Kind::kMax:
      return "max(" + n_->a->toString() + "," + n_->b->toString() + ")";
  }
  return "?";
}

DimExpr product(const std::vector<DimExpr>& dims) {
  DimExpr p(int64_t{1});
  for (const auto& d : dims) p = p * d;
  return p;
}

std::string toString(const std::vector<DimExpr>& dims) {
  std::string s = "[";
  for (size_t i = 0; i < dims.size(); ++i) {
    if (i) s += ", ";
    s += dims[i].toString();
  }
  return s + "]";
}

Result<std::vector<int64_t>> evalDims(const std::vector<DimExpr>& dims, const DimExpr::Lookup& f) {
  std::vector<int64_t> out;
  out.reserve(dims.size());
  for (const auto& d : dims) {
    OPFORGE_ASSIGN_OR_RETURN(int64_t v, d.eval(f));
    out.push_back(v);
  }
  return out;
}

}  // namespace opforge
