// ai.onnx::Compress on the CPU: a hand-checked selection with the condition as run-time data (a
// data-dependent length) and as a constant (a plain length), and bad input named with the node,
// the op and the value.
#include <gtest/gtest.h>

#include "op_harness.h"

using namespace opforge;
using namespace opforge::test;

namespace {

const char* kCompress = "ai.onnx::Compress";

TensorValue bools(const std::vector<uint8_t>& v) {
  TensorValue t;
  t.desc = TensorDesc{DataType::kBool, {static_cast<int64_t>(v.size())}};
  t.data = v;
  return t;
}

}  // namespace

TEST(Compress, SelectsSlicesWithARunTimeCondition) {
  // [2, 4, 2], axis 1, condition of length 3 (the 4th slice is dropped): slices 0 and 2.
  std::vector<float> xs(16);
  for (int i = 0; i < 16; ++i) xs[i] = static_cast<float>(i);
  TensorValue x = fromFloats({2, 4, 2}, xs);
  auto r = runEngine(Registry::global(), kCompress, {{"axis", int64_t{1}}}, {x, bools({1, 0, 1})});
  ASSERT_TRUE(r.isOk()) << r.status().message();
  ASSERT_EQ(r->outputs[0].desc.dims, (std::vector<int64_t>{2, 2, 2}));
  EXPECT_EQ(toDoubles(r->outputs[0]), (std::vector<double>{0, 1, 4, 5, 8, 9, 12, 13}));
  // No axis: the flattened input; negative axis.
  auto flat = runEngine(Registry::global(), kCompress, {}, {x, bools({0, 1, 1, 0, 0, 1})});
  ASSERT_TRUE(flat.isOk()) << flat.status().message();
  EXPECT_EQ(toDoubles(flat->outputs[0]), (std::vector<double>{1, 2, 5}));
  auto last = runEngine(Registry::global(), kCompress, {{"axis", int64_t{-1}}}, {x, bools({0, 1})});
  ASSERT_TRUE(last.isOk()) << last.status().message();
  EXPECT_EQ(toDoubles(last->outputs[0]), (std::vector<double>{1, 3, 5, 7, 9, 11, 13, 15}));
  // Nothing selected: an empty output.
  auto none = runEngine(Registry::global(), kCompress, {{"axis", int64_t{0}}}, {x, bools({0, 0})});
  ASSERT_TRUE(none.isOk()) << none.status().message();
  EXPECT_EQ(none->outputs[0].desc.dims, (std::vector<int64_t>{0, 4, 2}));
}

TEST(Compress, AConstantConditionGivesAPlainLength) {
  NetworkDefinition net(Registry::global());
  auto x = *net.addInput("x", DataType::kFloat32, {5, 3});
  auto c = *net.addConstant("c", bools({1, 1, 0, 1}));
  auto y = net.addOp(kCompress, {x, c}, {{"axis", int64_t{0}}}, "compress_node");
  ASSERT_TRUE(y.isOk()) << y.status().message();
  EXPECT_EQ(net.shapeOf((*y)[0]), "[3, 3]");
}

TEST(Compress, BadInputIsNamed) {
  NetworkDefinition net(Registry::global());
  auto x = *net.addInput("x", DataType::kFloat32, {5, 3});
  auto c = *net.addInput("c", DataType::kBool, {3});
  auto c_long = *net.addInput("c_long", DataType::kBool, {6});
  auto c_i64 = *net.addInput("c_i64", DataType::kInt64, {3});
  auto c_2d = *net.addInput("c_2d", DataType::kBool, {3, 1});
  expectError(net.addOp(kCompress, {x, c}, {{"axis", int64_t{2}}}, "compress_node").status(),
              {"compress_node", "ai.onnx::Compress", "axis 2", "rank 2"});
  expectError(net.addOp(kCompress, {x, c_long}, {{"axis", int64_t{0}}}, "compress_node").status(),
              {"compress_node", "'condition' has 6 entries", "5 of axis 0"});
  expectError(net.addOp(kCompress, {x, c_i64}, {}, "compress_node").status(),
              {"compress_node", "'condition' must be BOOL", "INT64"});
  expectError(net.addOp(kCompress, {x, c_2d}, {}, "compress_node").status(),
              {"compress_node", "'condition' must be 1-D", "3"});
}
