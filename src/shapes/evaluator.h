// evaluator.h — symbolic shapes at one concrete point, the one place that binds symbols, evaluates
// dimensions and checks a node's assertions (internal; the builder at each profile point and the
// runtime at the shapes set both use it, so their messages have one form).
//
// Messages (each ends with the evaluator's `where`, e.g. "at the opt shapes of optimization
// profile 0" or "at these input shapes"; NODE is the caller's label, "node 'a' (ai.onnx::Add v1)"):
//   failed assertion:  "NODE: MESSAGE WHERE (L vs R)"  (for kLe: "(L > R)")
//   negative dim:      "WHAT [x.0 - 4, 3] has dimension 0 = -2 WHERE"
//   size-tensor bound: "NODE: size tensor 'n#0' (upper bound): ..." (the DimExpr error)
//
// Usage:
//   shapes::Evaluator ev("at these input shapes");
//   ev.bindShape(input.dims, {2, 3});                 // x.0 = 2 where dims are [x.0, 3]
//   OPFORGE_RETURN_IF_ERROR(ev.bindSizes(label, node.size_tensors, shapes::Bound::kUpper));
//   OPFORGE_RETURN_IF_ERROR(ev.checkAll(label, node.assertions, shapes::Unbound::kError));
//   OPFORGE_ASSIGN_OR_RETURN(auto d, ev.outputDims(label, "y", out.dims));
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "opforge/registry.h"
#include "opforge/shape.h"
#include "opforge/status.h"

namespace opforge::shapes {

// Which value a data-dependent size takes: what the builder tunes for, or what buffers hold. A
// size may have no upper bound (its SizeRecord::upper is below 0: opforge::ReadValues, whose
// values size tensors only the run knows), or one over such a size: kUpper gives it its opt value
// (the builder, which needs a number everywhere), kAllocation leaves it unbound (the runtime,
// which allocates the tensors it sizes when the run has bound it).
enum class Bound { kOpt, kUpper, kAllocation };

// Whether a size has no upper bound of its own.
inline bool unbounded(const SizeRecord& s) {
  return s.upper.isConst() && s.upper.constValue() < 0;
}
// An assertion over a symbol not bound yet (a node's own data-dependent size before it ran):
// an error (the builder binds everything), or skipped (the runtime checks it once bound).
enum class Unbound { kError, kSkip };

// Whether an assertion reads one of `sizes` (data-dependent size symbols): the builder and a
// context's planning leave such an assertion to the node's run, which binds the size the data gave.
inline bool readsAnySize(const DimAssertion& a, const std::vector<std::string>& sizes) {
  for (const auto& s : sizes)
    if (a.lhs.dependsOn(s) || a.rhs.dependsOn(s)) return true;
  return false;
}

class Evaluator {
 public:
  explicit Evaluator(std::string where = "") : where_(std::move(where)) {}

  const std::string& where() const { return where_; }
  void setWhere(std::string where) { where_ = std::move(where); }

  void clear() { values_.clear(); }
  void bind(const std::string& symbol, int64_t value) { values_[symbol] = value; }
  // Binds each dimension of `dims` that is a bare symbol to the same axis of `shape`.
  void bindShape(const std::vector<DimExpr>& dims, const std::vector<int64_t>& shape);
  // Binds `sizes` (one node's) at their opt value or upper bound, in order.
  Status bindSizes(const std::string& node, const std::vector<SizeRecord>& sizes, Bound bound);

  std::optional<int64_t> value(const std::string& symbol) const;
  // Whether `e` names a symbol this evaluator has no value for.
  bool namesUnbound(const DimExpr& e) const;
  const std::map<std::string, int64_t>& values() const { return values_; }
  // A lookup over this evaluator's values; valid while the evaluator lives and is not moved.
  DimExpr::Lookup lookup() const;

  // `dims` evaluated; a dimension below 0 is an error naming `what`.
  Result<std::vector<int64_t>> dims(const std::string& what,
                                    const std::vector<DimExpr>& dims) const;
  // The same for an output of `node`: the error names "NODE: output 'OUTPUT'", a text built only
  // when there is an error (the runtime calls this per layer and run).
  Result<std::vector<int64_t>> outputDims(const std::string& node, const std::string& output,
                                          const std::vector<DimExpr>& dims) const;
  // Checks one assertion of `node`; see Unbound for one over an unbound symbol.
  Status check(const std::string& node, const DimAssertion& a, Unbound unbound) const;
  Status checkAll(const std::string& node, const std::vector<DimAssertion>& assertions,
                  Unbound unbound) const;

 private:
  std::string suffix() const { return where_.empty() ? "" : " " + where_; }
  Status dimsError(const std::string& what, const std::vector<DimExpr>& dims,
                   const Result<std::vector<int64_t>>& got) const;
  std::string where_;
  std::map<std::string, int64_t> values_;
};

}  // namespace opforge::shapes
