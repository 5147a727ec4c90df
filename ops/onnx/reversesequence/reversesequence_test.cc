// ai.onnx::ReverseSequence on the CPU: a hand-checked reversal in both axis orders, and bad input
// (attributes, ranks, a length outside the time axis) named with the node, the op and the value.
#include <gtest/gtest.h>

#include "op_harness.h"

using namespace opforge;
using namespace opforge::test;

namespace {

const char* kRev = "ai.onnx::ReverseSequence";

}  // namespace

TEST(ReverseSequence, ReversesThePrefixOfEachBatchEntry) {
  // Time-major [T=4, B=2]: column 0 reversed over 3 steps, column 1 over 1 (unchanged).
  TensorValue x = fromFloats({4, 2}, {0, 1, 2, 3, 4, 5, 6, 7});
  auto r = runEngine(Registry::global(), kRev, {}, {x, fromInt64s({2}, {3, 1})});
  ASSERT_TRUE(r.isOk()) << r.status().message();
  EXPECT_EQ(toDoubles(r->outputs[0]), (std::vector<double>{4, 1, 2, 3, 0, 5, 6, 7}));
  // Batch-major [B=2, T=4]: row 0 fully reversed, row 1 not at all.
  auto b =
      runEngine(Registry::global(), kRev, {{"batch_axis", int64_t{0}}, {"time_axis", int64_t{1}}},
                {fromFloats({2, 4}, {0, 1, 2, 3, 4, 5, 6, 7}), fromInt64s({2}, {4, 0})});
  ASSERT_TRUE(b.isOk()) << b.status().message();
  EXPECT_EQ(toDoubles(b->outputs[0]), (std::vector<double>{3, 2, 1, 0, 4, 5, 6, 7}));
}

TEST(ReverseSequence, BadInputIsNamed) {
  TensorValue x = fromFloats({4, 2}, {0, 1, 2, 3, 4, 5, 6, 7});
  auto r = runEngine(Registry::global(), kRev, {}, {x, fromInt64s({2}, {3, 5})});
  ASSERT_FALSE(r.isOk());
  expectError(r.status(), {"ReverseSequence", "'sequence_lens' holds 5 at position 1", "[0, 4]"});
  auto neg = runEngine(Registry::global(), kRev, {}, {x, fromInt64s({2}, {-1, 2})});
  ASSERT_FALSE(neg.isOk());
  expectError(neg.status(), {"'sequence_lens' holds -1 at position 0"});
  NetworkDefinition net(Registry::global());
  auto a = *net.addInput("x", DataType::kFloat32, {4, 2, 3});
  auto lens = *net.addInput("lens", DataType::kInt64, {2});
  auto lens3 = *net.addInput("lens3", DataType::kInt64, {3});
  auto lens32 = *net.addInput("lens32", DataType::kInt32, {2});
  auto v = *net.addInput("v", DataType::kFloat32, {4});
  expectError(net.addOp(kRev, {a, lens}, {{"batch_axis", int64_t{2}}}, "rev_node").status(),
              {"rev_node", "ai.onnx::ReverseSequence", "batch_axis must be 0 or 1, got 2"});
  expectError(net.addOp(kRev, {a, lens}, {{"batch_axis", int64_t{0}}}, "rev_node").status(),
              {"rev_node", "must differ, both are 0"});
  expectError(net.addOp(kRev, {a, lens3}, {}, "rev_node").status(),
              {"rev_node", "one entry per batch entry", "3 vs 2"});
  expectError(net.addOp(kRev, {a, lens32}, {}, "rev_node").status(),
              {"rev_node", "'sequence_lens' must be INT64", "INT32"});
  expectError(net.addOp(kRev, {v, lens}, {}, "rev_node").status(),
              {"rev_node", "rank >= 2", "[4]"});
}
