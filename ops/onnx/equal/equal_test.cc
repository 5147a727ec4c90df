// Comparisons of shape values (ops/onnx/common/binary.h symCompare): decided only where every
// valid binding agrees; dimensions and data-dependent sizes are >= 0.
#include <gtest/gtest.h>

#include "ops/onnx/common/binary.h"

using namespace opforge;
using namespace opforge::ops;

namespace {
// 1 / 0 for a decided comparison, -1 for an undecided one.
int cmp(SymCmp op, const DimExpr& a, const DimExpr& b) {
  auto r = symCompare(op, a, b);
  return r ? static_cast<int>(r->constValue()) : -1;
}
}  // namespace

TEST(SymCompare, DimensionsAreNeverNegative) {
  const DimExpr b = DimExpr::symbol("x.0"), s = DimExpr::symbol("x.1");
  EXPECT_EQ(cmp(SymCmp::kEq, b, -1), 0);  // the TorchScript expand(batch, -1, -1) chain
  EXPECT_EQ(cmp(SymCmp::kEq, floorDiv(b * s, s), -1), 0);  // Reshape's -1 (GPT-2's mask)
  EXPECT_EQ(cmp(SymCmp::kEq, b * 2 + 3, 1), 0);
  EXPECT_EQ(cmp(SymCmp::kGe, b, 0), 1);
  EXPECT_EQ(cmp(SymCmp::kLt, b, 0), 0);
  EXPECT_EQ(cmp(SymCmp::kGt, b + 1, b), 1);
  EXPECT_EQ(cmp(SymCmp::kLe, b, b), 1);
  EXPECT_EQ(cmp(SymCmp::kEq, b, b), 1);
  EXPECT_EQ(cmp(SymCmp::kEq, DimExpr(4), DimExpr(4)), 1);
  EXPECT_EQ(cmp(SymCmp::kLt, DimExpr(4), DimExpr(3)), 0);
}

TEST(SymCompare, UndecidableStaysUnknown) {
  const DimExpr b = DimExpr::symbol("x.0"), s = DimExpr::symbol("x.1");
  EXPECT_EQ(cmp(SymCmp::kEq, b, s), -1);       // equal for some bindings only
  EXPECT_EQ(cmp(SymCmp::kEq, b, 1), -1);       // a batch may be 1
  EXPECT_EQ(cmp(SymCmp::kEq, b - s, -1), -1);  // a difference may be negative
  EXPECT_EQ(cmp(SymCmp::kLt, b, s), -1);
  EXPECT_EQ(cmp(SymCmp::kGt, b, 0), -1);  // a dimension may be 0
}
