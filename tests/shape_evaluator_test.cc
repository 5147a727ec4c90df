// The one shape evaluator (src/shapes/evaluator.h) that the builder and the runtime share:
// binding, dimensions with the negativity check, assertions with one message format.
#include <gtest/gtest.h>

#include "shapes/evaluator.h"

using namespace opforge;

namespace {
const std::string kNode = "node 'add' (ai.onnx::Add v1)";

void expectIn(const Status& st, const std::vector<std::string>& parts) {
  ASSERT_FALSE(st.isOk());
  for (const auto& p : parts) EXPECT_NE(st.message().find(p), std::string::npos) << st.message();
}
}  // namespace

TEST(ShapeEvaluator, BindsInputSymbolsAndSizeTensors) {
  shapes::Evaluator ev("at these input shapes");
  const DimExpr x0 = DimExpr::symbol("x.0"), x1 = DimExpr::symbol("x.1");
  ev.bindShape({x0, DimExpr(3), x1}, {2, 3, 5});
  EXPECT_EQ(ev.value("x.0"), 2);
  EXPECT_EQ(ev.value("x.1"), 5);
  EXPECT_FALSE(ev.value("x.2").has_value());
  EXPECT_EQ(ev.values().size(), 2u);  // the constant axis binds nothing
  SizeRecord k;
  k.symbol = "nz#0";
  k.opt = floorDiv(x0 * x1, 2);
  k.upper = x0 * x1;
  ASSERT_TRUE(ev.bindSizes(kNode, {k}, shapes::Bound::kOpt).isOk());
  EXPECT_EQ(ev.value("nz#0"), 5);
  ASSERT_TRUE(ev.bindSizes(kNode, {k}, shapes::Bound::kUpper).isOk());
  EXPECT_EQ(ev.value("nz#0"), 10);
  auto d = ev.dims("output 'y'", {DimExpr::symbol("nz#0"), x0 + 1});
  ASSERT_TRUE(d.isOk()) << d.status().message();
  EXPECT_EQ(*d, (std::vector<int64_t>{10, 3}));
  // A copy keeps its own values.
  shapes::Evaluator copy = ev;
  copy.bind("x.0", 7);
  EXPECT_EQ(copy.value("x.0"), 7);
  EXPECT_EQ(ev.value("x.0"), 2);
  EXPECT_EQ(*copy.lookup()("x.0"), 7);
}

TEST(ShapeEvaluator, ASizeTensorOverAnUnboundSymbolNamesTheNodeAndTheSize) {
  shapes::Evaluator ev("at the opt shapes of optimization profile 0");
  SizeRecord k;
  k.symbol = "nz#0";
  k.upper = DimExpr::symbol("y.0");
  expectIn(ev.bindSizes(kNode, {k}, shapes::Bound::kUpper),
           {kNode, "size tensor 'nz#0' (upper bound)", "optimization profile 0", "y.0"});
  EXPECT_FALSE(ev.value("nz#0").has_value());
}

TEST(ShapeEvaluator, ANegativeDimensionIsAnError) {
  shapes::Evaluator ev("at the min shapes of optimization profile 1");
  const DimExpr x0 = DimExpr::symbol("x.0");
  ev.bind("x.0", 2);
  Status st = ev.dims(kNode + ": output 'y'", {x0 - 4, DimExpr(3)}).status();
  expectIn(st, {kNode + ": output 'y'", "has dimension 0 = -2",
                "at the min shapes of optimization profile 1"});
  EXPECT_EQ(st.code(), StatusCode::kInvalidArgument);
  // An unbound symbol is an error too, naming what was evaluated.
  expectIn(ev.dims("tensor 't'", {DimExpr::symbol("z.0")}).status(), {"tensor 't'", "z.0"});
}

TEST(ShapeEvaluator, FailedAssertionsNameNodeOpMessageAndValues) {
  shapes::Evaluator ev("at these input shapes");
  const DimExpr a = DimExpr::symbol("a.0"), b = DimExpr::symbol("b.0");
  ev.bind("a.0", 3);
  ev.bind("b.0", 4);
  DimAssertion eq{a, DimAssertion::Op::kEq, b, "Add: dim 0 of A (a.0) must equal dim 0 of B"};
  Status st = ev.check(kNode, eq, shapes::Unbound::kError);
  EXPECT_EQ(st.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(st.message(),
            "node 'add' (ai.onnx::Add v1): Add: dim 0 of A (a.0) must equal dim 0 of B at these "
            "input shapes (3 vs 4)");
  DimAssertion le{b, DimAssertion::Op::kLe, a, "b must fit in a"};
  expectIn(ev.check(kNode, le, shapes::Unbound::kError), {kNode, "b must fit in a", "(4 > 3)"});
  DimAssertion bc{a, DimAssertion::Op::kBroadcast, b, "do not broadcast"};
  expectIn(ev.checkAll(kNode, {bc}, shapes::Unbound::kError), {"do not broadcast", "(3 vs 4)"});
  ev.bind("b.0", 1);
  EXPECT_TRUE(ev.checkAll(kNode, {bc, le}, shapes::Unbound::kError).isOk());
  // Over a symbol not bound yet: skipped at run time, an error at build time.
  DimAssertion later{DimExpr::symbol("nz#0"), DimAssertion::Op::kLe, a, "count within a"};
  EXPECT_TRUE(ev.check(kNode, later, shapes::Unbound::kSkip).isOk());
  expectIn(ev.check(kNode, later, shapes::Unbound::kError), {kNode, "count within a", "nz#0"});
}
