// ai.onnx::Unique on the CPU: the four outputs, sorted and in order of first occurrence, with and
// without an axis, hand-checked (the ONNX spec's examples), and bad input named with the node.
#include <gtest/gtest.h>

#include <cstring>

#include "op_harness.h"

using namespace opforge;
using namespace opforge::test;

namespace {

const char* kUnique = "ai.onnx::Unique";

std::vector<int64_t> ints(const TensorValue& t) {
  std::vector<int64_t> v(t.desc.numel());
  if (!v.empty()) std::memcpy(v.data(), t.data.data(), v.size() * 8);
  return v;
}

}  // namespace

TEST(Unique, FlattenedSortedAndUnsorted) {
  TensorValue x = fromFloats({6}, {2, 1, 1, 3, 4, 3});
  auto s = runEngine(Registry::global(), kUnique, {}, {x});
  ASSERT_TRUE(s.isOk()) << s.status().message();
  EXPECT_EQ(toDoubles(s->outputs[0]), (std::vector<double>{1, 2, 3, 4}));
  EXPECT_EQ(ints(s->outputs[1]), (std::vector<int64_t>{1, 0, 3, 4}));
  EXPECT_EQ(ints(s->outputs[2]), (std::vector<int64_t>{1, 0, 0, 2, 3, 2}));
  EXPECT_EQ(ints(s->outputs[3]), (std::vector<int64_t>{2, 1, 2, 1}));
  auto u = runEngine(Registry::global(), kUnique, {{"sorted", int64_t{0}}}, {x});
  ASSERT_TRUE(u.isOk()) << u.status().message();
  EXPECT_EQ(toDoubles(u->outputs[0]), (std::vector<double>{2, 1, 3, 4}));
  EXPECT_EQ(ints(u->outputs[1]), (std::vector<int64_t>{0, 1, 3, 4}));
  EXPECT_EQ(ints(u->outputs[2]), (std::vector<int64_t>{0, 1, 1, 2, 3, 2}));
  EXPECT_EQ(ints(u->outputs[3]), (std::vector<int64_t>{1, 2, 2, 1}));
}

TEST(Unique, SlicesAlongAnAxis) {
  // Rows [1, 0, 0], [1, 0, 0], [2, 3, 4]: two unique rows.
  TensorValue x = fromFloats({3, 3}, {1, 0, 0, 1, 0, 0, 2, 3, 4});
  auto r = runEngine(Registry::global(), kUnique, {{"axis", int64_t{0}}}, {x});
  ASSERT_TRUE(r.isOk()) << r.status().message();
  ASSERT_EQ(r->outputs[0].desc.dims, (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(toDoubles(r->outputs[0]), (std::vector<double>{1, 0, 0, 2, 3, 4}));
  EXPECT_EQ(ints(r->outputs[2]), (std::vector<int64_t>{0, 0, 1}));
  // Columns [1, 1, 2], [0, 0, 3], [0, 0, 4] of the same input: sorted, [0,0,3] < [0,0,4] < [1,1,2].
  auto c = runEngine(Registry::global(), kUnique, {{"axis", int64_t{-1}}}, {x});
  ASSERT_TRUE(c.isOk()) << c.status().message();
  EXPECT_EQ(toDoubles(c->outputs[0]), (std::vector<double>{0, 0, 1, 0, 0, 1, 3, 4, 2}));
  EXPECT_EQ(ints(c->outputs[1]), (std::vector<int64_t>{1, 2, 0}));
}

TEST(Unique, BadInputIsNamed) {
  NetworkDefinition net(Registry::global());
  auto x = *net.addInput("x", DataType::kFloat32, {4, 3});
  expectError(net.addOp(kUnique, {x}, {{"axis", int64_t{2}}}, "unique_node").status(),
              {"unique_node", "ai.onnx::Unique", "axis 2 is out of range"});
  expectError(net.addOp(kUnique, {x}, {{"sorted", int64_t{2}}}, "unique_node").status(),
              {"unique_node", "sorted must be 0 or 1, got 2"});
}
