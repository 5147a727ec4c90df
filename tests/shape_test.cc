#include <gtest/gtest.h>

#include "opforge/shape.h"
#include "opforge/tensor.h"

using opforge::DimExpr;

namespace {
DimExpr::Lookup bind(std::map<std::string, int64_t> m) {
  return [m](const std::string& s) -> std::optional<int64_t> {
    auto it = m.find(s);
    if (it == m.end()) return std::nullopt;
    return it->second;
  };
}
}  // namespace

TEST(DimExpr, ConstantsFold) {
  DimExpr e = DimExpr(3) * 4 + 2 - 1;
  ASSERT_TRUE(e.isConst());
  EXPECT_EQ(e.constValue(), 13);
  EXPECT_EQ(opforge::floorDiv(DimExpr(-7), 2).constValue(), -4);
  EXPECT_EQ(opforge::ceilDiv(DimExpr(7), 2).constValue(), 4);
  EXPECT_EQ(opforge::ceilDiv(DimExpr(-7), 2).constValue(), -3);
  EXPECT_EQ(opforge::min(DimExpr(3), 5).constValue(), 3);
  EXPECT_EQ(opforge::max(DimExpr(3), 5).constValue(), 5);
}

TEST(DimExpr, IdentitiesSimplify) {
  DimExpr x = DimExpr::symbol("x.0");
  EXPECT_TRUE((x + 0).sameAs(x));
  EXPECT_TRUE((x * 1).sameAs(x));
  EXPECT_TRUE((x * 0).isConst());
  EXPECT_TRUE((x - x).isConst());
  EXPECT_TRUE(opforge::floorDiv(x, 1).sameAs(x));
  EXPECT_TRUE(((x + 2) + 3).sameAs(x + 5));
  EXPECT_TRUE(((x + 2) - 2).sameAs(x));
  EXPECT_TRUE(((x + 4) - x).sameAs(DimExpr(4)));
  EXPECT_FALSE((x + 1).sameAs(x + 2));
}

// The broadcasts exporters write (BERT's position slice min(seq, 64), Expand's max with 0 and with
// the other operand) collapse to the dimension; expressions that may be negative keep their max.
TEST(DimExpr, MinMaxAbsorbAndDropZeroForDimensions) {
  using opforge::max, opforge::min;
  const DimExpr x = DimExpr::symbol("x.1"), y = DimExpr::symbol("y.1");
  EXPECT_TRUE(max(x, min(x, 64)).sameAs(x));
  EXPECT_TRUE(max(min(x, 64), x).sameAs(x));
  EXPECT_TRUE(min(x, max(y, x)).sameAs(x));
  EXPECT_TRUE(max(x, max(x, y)).sameAs(max(x, y)));
  EXPECT_TRUE(min(min(y, x), x).sameAs(min(y, x)));
  EXPECT_TRUE(max(x, 0).sameAs(x));
  EXPECT_TRUE(min(x * 2 + 1, 0).sameAs(DimExpr(0)));
  EXPECT_TRUE(max(max(max(min(x, 64), 0), x), max(min(x, 64), 0)).sameAs(x));
  EXPECT_FALSE(max(x - 3, 0).sameAs(x - 3));  // x - 3 may be negative
  EXPECT_FALSE(max(x, y).sameAs(x));
  // One expression plus constants: the smaller or larger offset, whatever the expression's sign.
  EXPECT_TRUE(min(x, x + 3).sameAs(x));
  EXPECT_TRUE(min(x + 3, x).sameAs(x));
  EXPECT_TRUE(max(x - 1, x + 2).sameAs(x + 2));
  EXPECT_TRUE(min(x * y - 5, x * y + 1).sameAs(x * y - 5));
  EXPECT_TRUE(max(x - 3, x - 3).sameAs(x - 3));
  EXPECT_FALSE(min(x + 1, y + 3).sameAs(x + 1));
  // A Slice's open end: min(size, INT64_MAX) is the size (DeBERTa-v2's If on two such sizes).
  constexpr int64_t kBig = std::numeric_limits<int64_t>::max();
  EXPECT_TRUE(min(max(x, y), kBig).sameAs(max(x, y)));
  EXPECT_TRUE(min(kBig, x - 3).sameAs(x - 3));
  EXPECT_TRUE(max(x, kBig).sameAs(DimExpr(kBig)));
  auto at = [](int64_t v) {
    return [v](const std::string&) -> std::optional<int64_t> { return v; };
  };
  EXPECT_EQ(*max(x - 3, 0).eval(at(1)), 0);
  EXPECT_EQ(*max(x, min(x, 64)).eval(at(100)), 100);
}

TEST(DimExpr, EvaluatesSymbolsAndReportsErrors) {
  DimExpr x = DimExpr::symbol("x.0"), y = DimExpr::symbol("y.1");
  DimExpr e = opforge::ceilDiv(x * 3 + y, 2);
  auto v = e.eval(bind({{"x.0", 5}, {"y.1", 4}}));
  ASSERT_TRUE(v.isOk());
  EXPECT_EQ(*v, 10);
  auto missing = e.eval(bind({{"x.0", 5}}));
  ASSERT_FALSE(missing.isOk());
  EXPECT_NE(missing.status().message().find("y.1"), std::string::npos);
  auto div0 = opforge::floorDiv(x, y).eval(bind({{"x.0", 5}, {"y.1", 0}}));
  ASSERT_FALSE(div0.isOk());
  EXPECT_NE(div0.status().message().find("division by zero"), std::string::npos);
  auto overflow = (x * x).eval(bind({{"x.0", int64_t{1} << 40}}));
  EXPECT_FALSE(overflow.isOk());
}

TEST(DimExpr, PrintsReadably) {
  DimExpr x = DimExpr::symbol("x.0");
  EXPECT_EQ((x * 2 + 4).toString(), "x.0*2+4");
  EXPECT_EQ(((x + 1) * 2).toString(), "(x.0+1)*2");
  EXPECT_EQ(opforge::min(x, 3).toString(), "min(x.0,3)");
  EXPECT_EQ(opforge::toString({x, DimExpr(3)}), "[x.0, 3]");
}

TEST(DimExpr, SubstituteAndSymbols) {
  DimExpr x = DimExpr::symbol("a"), y = DimExpr::symbol("b");
  DimExpr e = x * y + x;
  std::set<std::string> s;
  e.collectSymbols(s);
  EXPECT_EQ(s, (std::set<std::string>{"a", "b"}));
  DimExpr f = e.substitute([](const std::string& n) -> std::optional<DimExpr> {
    if (n == "a") return DimExpr(2);
    return std::nullopt;
  });
  EXPECT_TRUE(f.dependsOn("b"));
  EXPECT_FALSE(f.dependsOn("a"));
  EXPECT_EQ(*f.eval(bind({{"b", 5}})), 12);
}

TEST(DimAssertion, Holds) {
  opforge::DimAssertion eq{DimExpr(1), opforge::DimAssertion::Op::kEq, DimExpr(1), ""};
  EXPECT_TRUE(eq.holds(3, 3));
  EXPECT_FALSE(eq.holds(3, 4));
  opforge::DimAssertion b{DimExpr(1), opforge::DimAssertion::Op::kBroadcast, DimExpr(1), ""};
  EXPECT_TRUE(b.holds(1, 7));
  EXPECT_TRUE(b.holds(7, 1));
  EXPECT_FALSE(b.holds(3, 7));
  EXPECT_FALSE(b.holds(1, 0));  // max(1, 0) would be wrong: refused
  EXPECT_TRUE(b.holds(0, 0));
}

// UBSan reported signed overflow in TensorDesc::numel for dims whose product passes 2^63 (a fuzzed
// model): the count saturates instead, and so does the byte count, so size checks refuse it.
TEST(TensorDesc, ElementAndByteCountsSaturateInsteadOfWrapping) {
  using opforge::DataType;
  using opforge::TensorDesc;
  EXPECT_EQ((TensorDesc{DataType::kFloat32, {2, 3, 4}}.numel()), 24);
  EXPECT_EQ((TensorDesc{DataType::kFloat32, {2, 3, 4}}.bytes()), 96u);
  EXPECT_EQ((TensorDesc{DataType::kFloat32, {}}.numel()), 1);
  EXPECT_EQ((TensorDesc{DataType::kFloat32, {5, 0, int64_t{1} << 62}}.numel()), 0);
  const TensorDesc huge{DataType::kFloat32, {int64_t{1} << 32, int64_t{1} << 32}};
  EXPECT_EQ(huge.numel(), INT64_MAX);
  EXPECT_EQ(huge.bytes(), SIZE_MAX);
  // Fits in int64 elements, not in bytes.
  const TensorDesc wide{DataType::kFloat64, {int64_t{1} << 61}};
  EXPECT_EQ(wide.numel(), int64_t{1} << 61);
  EXPECT_EQ(wide.bytes(), SIZE_MAX);
  EXPECT_EQ((TensorDesc{DataType::kFloat32, {-1, 4}}.bytes()), SIZE_MAX);
}

// Exact quotients simplify: (B * k) / B -> k (a Reshape(-1) folds B windows of k into B * k and
// exporters divide by B again), (B * 128) / 32 -> B * 4, B / B -> 1; an inexact one stays.
TEST(DimExpr, ExactQuotientsSimplify) {
  const DimExpr b = DimExpr::symbol("B"), s = DimExpr::symbol("S");
  EXPECT_TRUE(floorDiv(b * 4, b).sameAs(DimExpr(4)));
  EXPECT_TRUE(floorDiv(b * s, s).sameAs(b));
  EXPECT_TRUE(ceilDiv(b * s, b).sameAs(s));
  EXPECT_TRUE(floorDiv(b, b).sameAs(DimExpr(1)));
  EXPECT_TRUE(floorDiv(b * 128, 32).sameAs(b * 4));
  EXPECT_TRUE(ceilDiv(b * 6, 3).sameAs(b * 2));
  const DimExpr inexact = floorDiv(b * 3, 2);
  EXPECT_EQ(inexact.kind(), DimExpr::Kind::kFloorDiv);
  EXPECT_EQ(*inexact.eval([](const std::string&) { return std::optional<int64_t>(5); }), 7);
  EXPECT_EQ(floorDiv(b * s, b + 1).kind(), DimExpr::Kind::kFloorDiv);
}
