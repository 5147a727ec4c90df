// runtime_values.h — shape rules over values that may be run-time data (opforge::ReadValues gives
// them as symbols of either sign): whether a value is one, and integer indicators
// built from min and max, so that a rule can say "0 copies, -1 infers, negative counts from the
// end" in DimExpr arithmetic, which the runtime evaluates once the values are read.
#pragma once

#include "opforge/shape.h"

namespace opforge::ops {

// Whether e is computed from a run-time value: opforge::ReadValues gives its values as a size
// minus 2^40, so such an expression holds a constant near 2^40 (folded with what was added to the
// value), which no expression over dimensions does (a tensor has at most 2^40 elements). Values
// from dims and input shapes are dimensions (never negative, as shape rules have always taken
// them); these may be any integer.
inline bool readAtRunTime(const DimExpr& e, int depth = 0) {
  using K = DimExpr::Kind;
  if (depth > 64) return false;
  switch (e.kind()) {
    case K::kConst: {
      // 2^40, give or take what arithmetic on the value added (never INT64_MAX, a Slice's "to
      // the end", which sits beside dimensions in many an expression).
      const int64_t c = e.constValue() < 0 ? -(e.constValue() + 1) : e.constValue();
      return c >= (int64_t{1} << 40) - (int64_t{1} << 36) &&
             c <= (int64_t{1} << 40) + (int64_t{1} << 36);
    }
    case K::kSymbol:
      return false;
    default:
      return readAtRunTime(e.lhs(), depth + 1) || readAtRunTime(e.rhs(), depth + 1);
  }
}

// For an integer v: 1 where v == 0, else 0.
inline DimExpr isZero(const DimExpr& v) {
  return DimExpr(int64_t{1}) - min(DimExpr(int64_t{1}), max(v, DimExpr(int64_t{0}) - v));
}
// For an integer v: 1 where v < 0, else 0.
inline DimExpr isNegative(const DimExpr& v) {
  return DimExpr(int64_t{1}) - min(DimExpr(int64_t{1}), max(v + 1, DimExpr(int64_t{0})));
}

}  // namespace opforge::ops
