#include "evaluator.h"

#include <algorithm>
#include <set>

namespace opforge::shapes {

void Evaluator::bindShape(const std::vector<DimExpr>& dims, const std::vector<int64_t>& shape) {
  for (size_t a = 0; a < dims.size() && a < shape.size(); ++a)
    if (dims[a].kind() == DimExpr::Kind::kSymbol) values_[dims[a].symbolName()] = shape[a];
}

Status Evaluator::bindSizes(const std::string& node, const std::vector<SizeRecord>& sizes,
                            Bound bound) {
  for (const auto& s : sizes) {
    const bool none = unbounded(s);
    if (bound == Bound::kAllocation && (none || namesUnbound(s.upper)))
      continue;                                        // the run allocates what it sizes
    const bool at_opt = bound == Bound::kOpt || none;  // kUpper: no bound, so the opt value
    auto v = (at_opt ? s.opt : s.upper).eval(lookup());
    if (!v)
      return v.status().withContext(node + ": size tensor '" + s.symbol + "' (" +
                                    (at_opt ? "opt value" : "upper bound") + ")" + suffix());
    values_[s.symbol] = *v;
  }
  return Status::ok();
}

bool Evaluator::namesUnbound(const DimExpr& e) const {
  std::set<std::string> syms;
  e.collectSymbols(syms);
  for (const auto& sym : syms)
    if (!values_.count(sym)) return true;
  return false;
}

std::optional<int64_t> Evaluator::value(const std::string& symbol) const {
  auto it = values_.find(symbol);
  if (it == values_.end()) return std::nullopt;
  return it->second;
}

DimExpr::Lookup Evaluator::lookup() const {
  return [this](const std::string& s) { return value(s); };
}

namespace {
bool allNonNegative(const Result<std::vector<int64_t>>& d) {
  return d && std::all_of(d->begin(), d->end(), [](int64_t x) { return x >= 0; });
}
}  // namespace

Status Evaluator::dimsError(const std::string& what, const std::vector<DimExpr>& dims,
                            const Result<std::vector<int64_t>>& got) const {
  if (!got) return got.status().withContext(what + suffix());
  for (size_t a = 0; a < got->size(); ++a)
    if ((*got)[a] < 0)
      return Status::invalid(what + " " + toString(dims) + " has dimension " + std::to_string(a) +
                             " = " + std::to_string((*got)[a]) + suffix());
  return Status::ok();
}

Result<std::vector<int64_t>> Evaluator::dims(const std::string& what,
                                             const std::vector<DimExpr>& dims) const {
  auto d = evalDims(dims, lookup());
  if (allNonNegative(d)) return d;
  return dimsError(what, dims, d);
}

Result<std::vector<int64_t>> Evaluator::outputDims(const std::string& node,
                                                   const std::string& output,
                                                   const std::vector<DimExpr>& dims) const {
  auto d = evalDims(dims, lookup());
  if (allNonNegative(d)) return d;
  return dimsError(node + ": output '" + output + "'", dims, d);
}

Status Evaluator::check(const std::string& node, const DimAssertion& a, Unbound unbound) const {
  auto l = a.lhs.eval(lookup());
  auto r = a.rhs.eval(lookup());
  if (!l || !r) {
    if (unbound == Unbound::kSkip) return Status::ok();
    return (l ? r : l).status().withContext(node + ": " + a.message + suffix());
  }
  if (a.holds(*l, *r)) return Status::ok();
  return Status::invalid(node + ": " + a.message + suffix() + " (" + std::to_string(*l) +
                         (a.op == DimAssertion::Op::kLe ? " > " : " vs ") + std::to_string(*r) +
                         ")");
}

Status Evaluator::checkAll(const std::string& node, const std::vector<DimAssertion>& assertions,
                           Unbound unbound) const {
  for (const auto& a : assertions) OPFORGE_RETURN_IF_ERROR(check(node, a, unbound));
  return Status::ok();
}

}  // namespace opforge::shapes
