// ai.onnx::DeformConv on the CPU: with zero offsets and no mask it is Conv (compared with Conv's
// reference), a whole-pixel offset shifts the sampled image, and bad input is named with the node,
// the op and the value.
#include <gtest/gtest.h>

#include <random>

#include "op_harness.h"

using namespace opforge;
using namespace opforge::test;

namespace {

const char* kDc = "ai.onnx::DeformConv";

TensorValue zeros(const std::vector<int64_t>& dims) {
  TensorValue t;
  t.desc = TensorDesc{DataType::kFloat32, dims};
  t.data.assign(t.desc.bytes(), 0);
  return t;
}

}  // namespace

TEST(DeformConv, ZeroOffsetsAreConv) {
  std::mt19937_64 rng(7);
  const TensorValue x = randomTensor(DataType::kFloat32, {2, 4, 7, 8}, rng);
  const TensorValue w = randomTensor(DataType::kFloat32, {6, 2, 3, 2}, rng);
  const TensorValue b = randomTensor(DataType::kFloat32, {6}, rng);
  const Attrs attrs{{"group", int64_t{2}},
                    {"pads", std::vector<int64_t>{1, 0, 1, 1}},
                    {"strides", std::vector<int64_t>{2, 1}},
                    {"dilations", std::vector<int64_t>{1, 2}}};
  auto want = runKernel(*Registry::global(), "ai.onnx::Conv", attrs, {x, w, b}, 0xff);
  ASSERT_TRUE(want.isOk()) << want.status().message();
  const auto& yd = want->outputs[0].desc.dims;
  auto got = runKernel(*Registry::global(), kDc, attrs,
                       {x, w, zeros({2, 2 * 3 * 2, yd[2], yd[3]}), b}, 0xff);
  ASSERT_TRUE(got.isOk()) << got.status().message();
  EXPECT_TRUE(allClose(got->outputs[0], want->outputs[0]));
}

TEST(DeformConv, AnOffsetShiftsTheSamples) {
  // 1x1 kernel of weight 1: y[i, j] = x at (i + 1, j - 0.5): a whole row down, half a pixel left
  // (the average of two neighbours; zero beyond the image).
  TensorValue x = fromFloats({1, 1, 2, 2}, {1, 2, 3, 4});
  TensorValue w = fromFloats({1, 1, 1, 1}, {1});
  TensorValue off = fromFloats({1, 2, 2, 2}, {1, 1, 1, 1, -0.5f, -0.5f, -0.5f, -0.5f});
  auto r = runKernel(*Registry::global(), kDc, {}, {x, w, off}, 0xff);
  ASSERT_TRUE(r.isOk()) << r.status().message();
  EXPECT_EQ(toDoubles(r->outputs[0]), (std::vector<double>{1.5, 3.5, 0, 0}));
}

TEST(DeformConv, BadInputIsNamed) {
  NetworkDefinition net(Registry::global());
  auto x = *net.addInput("x", DataType::kFloat32, {1, 4, 5, 5});
  auto w = *net.addInput("w", DataType::kFloat32, {2, 4, 3, 3});
  auto off = *net.addInput("off", DataType::kFloat32, {1, 18, 3, 3});
  auto off_bad = *net.addInput("off_bad", DataType::kFloat32, {1, 18, 4, 3});
  auto off_ch = *net.addInput("off_ch", DataType::kFloat32, {1, 16, 3, 3});
  auto x3 = *net.addInput("x3", DataType::kFloat32, {1, 4, 5});
  expectError(net.addOp(kDc, {x, w, off}, {{"group", int64_t{0}}}, "dc_node").status(),
              {"dc_node", "ai.onnx::DeformConv", "group must be in [1, 2^31 - 1], got 0"});
  expectError(
      net.addOp(kDc, {x, w, off}, {{"strides", std::vector<int64_t>{1, 1, 1}}}, "dc_node").status(),
      {"dc_node", "strides must have 2 values"});
  expectError(net.addOp(kDc, {x, w, off_bad}, {}, "dc_node").status(),
              {"dc_node", "'offset' dim 2 must equal the output size", "4 vs 3"});
  expectError(net.addOp(kDc, {x, w, off_ch}, {}, "dc_node").status(),
              {"dc_node", "'offset' dim 1 must be offset_group * 2 * kH * kW", "16 vs 18"});
  expectError(net.addOp(kDc, {x, w, off}, {{"group", int64_t{2}}}, "dc_node").status(),
              {"dc_node", "W's dim 1 times group"});
  expectError(net.addOp(kDc, {x3, w, off}, {}, "dc_node").status(), {"dc_node", "[N, C, H, W]"});
}
