// ai.onnx::Col2Im on the CPU: overlapping blocks summed (hand-checked), and bad input named with
// the node, the op and the value.
#include <gtest/gtest.h>

#include "op_harness.h"

using namespace opforge;
using namespace opforge::test;

namespace {

const char* kC2i = "ai.onnx::Col2Im";

}  // namespace

TEST(Col2Im, SumsOverlappingBlocks) {
  // Image 1x3, blocks 1x2, stride 1: L = 2 columns; rows k = 0, 1 hold [1, 2] and [10, 20].
  // Position 0 gets k0 of l0 (1); position 1 gets k1 of l0 (10) + k0 of l1 (2); position 2 k1 of
  // l1 (20).
  TensorValue x = fromFloats({1, 2, 2}, {1, 2, 10, 20});
  auto r = runKernel(*Registry::global(), kC2i, {},
                     {x, fromInt64s({2}, {1, 3}), fromInt64s({2}, {1, 2})}, 0xff);
  ASSERT_TRUE(r.isOk()) << r.status().message();
  ASSERT_EQ(r->outputs[0].desc.dims, (std::vector<int64_t>{1, 1, 1, 3}));
  EXPECT_EQ(toDoubles(r->outputs[0]), (std::vector<double>{1, 12, 20}));
}

TEST(Col2Im, BadInputIsNamed) {
  NetworkDefinition net(Registry::global());
  auto x = *net.addInput("x", DataType::kFloat32, {1, 4, 4});
  auto img = *net.addConstant("img", fromInt64s({2}, {3, 3}));
  auto blk = *net.addConstant("blk", fromInt64s({2}, {2, 2}));
  auto blk3 = *net.addConstant("blk3", fromInt64s({2}, {3, 2}));
  auto big = *net.addConstant("big", fromInt64s({2}, {5, 1}));
  auto blk1 = *net.addConstant("blk1", fromInt64s({1}, {2}));
  auto dyn = *net.addInput("dyn", DataType::kInt64, {2});
  expectError(net.addOp(kC2i, {x, img, blk}, {{"strides", std::vector<int64_t>{0, 1}}}, "c2i_node")
                  .status(),
              {"c2i_node", "ai.onnx::Col2Im", "strides must be in [1, 2^31 - 1], got 0"});
  expectError(
      net.addOp(kC2i, {x, img, blk}, {{"pads", std::vector<int64_t>{1, 1}}}, "c2i_node").status(),
      {"c2i_node", "'pads' must have 4 values"});
  expectError(net.addOp(kC2i, {x, img, blk3}, {}, "c2i_node").status(),
              {"c2i_node", "dim 1 (4) is not a multiple of prod(block_shape) = 6"});
  expectError(net.addOp(kC2i, {x, img, big}, {}, "c2i_node").status(),
              {"c2i_node", "block of axis 0", "larger than the padded image"});
  expectError(net.addOp(kC2i, {x, img, blk1}, {}, "c2i_node").status(),
              {"c2i_node", "same, non-zero number of spatial axes"});
  expectError(net.addOp(kC2i, {x, img, dyn}, {}, "c2i_node").status(),
              {"c2i_node", "'block_shape' must be known when the network is built"});
  // L must match the block positions: 3x3 image, 2x2 blocks, stride 1 -> 4 positions, not 5.
  auto x5 = *net.addInput("x5", DataType::kFloat32, {1, 4, 5});
  expectError(net.addOp(kC2i, {x5, img, blk}, {}, "c2i_node").status(),
              {"c2i_node", "dim 2 must equal the number of block positions", "5 vs 4"});
}
