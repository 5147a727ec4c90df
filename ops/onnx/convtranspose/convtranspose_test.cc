// ConvTranspose: the GEMM + col2im path (FP32, FP64) against the plain loop over strides,
// dilations, padding modes, output padding and shapes, groups, ranks 1 to 3; a hand-computed case.
#include <gtest/gtest.h>

#include "op_harness.h"
#include "ops/onnx/common/gemm.h"

using namespace opforge;
using namespace opforge::test;

TEST(ConvTranspose, StrideTwoSpreadsEachInputOverItsKernel) {
  // x = [1, 2], kernel [1, 10, 100], stride 2: 1 * k at 0..2, 2 * k at 2..4 (overlap at 2).
  for (bool naive : {false, true}) {
    ops::ScopedNaiveKernels mode(naive);
    auto r = runKernel(*contribRegistry(), "ai.onnx::ConvTranspose",
                       {{"strides", std::vector<int64_t>{2}}},
                       {fromFloats({1, 1, 2}, {1, 2}), fromFloats({1, 1, 3}, {1, 10, 100})}, 0xff);
    ASSERT_TRUE(r.isOk()) << r.status().message();
    EXPECT_EQ(toDoubles(r->outputs[0]), (std::vector<double>{1, 10, 102, 20, 200})) << naive;
  }
}

TEST(ConvTranspose, FastPathMatchesTheReference) {
  std::mt19937_64 rng(29);
  struct Case {
    std::vector<int64_t> x, w;
    Attrs attrs;
    bool bias;
    DataType dt = DataType::kFloat32;
  };
  using V = std::vector<int64_t>;
  const std::vector<Case> cases = {
      {{2, 3, 5, 4}, {3, 4, 3, 3}, {}, true},
      {{1, 4, 14, 14}, {4, 6, 2, 2}, {{"strides", V{2, 2}}}, true},  // Mask R-CNN's upsampling
      {{1, 4, 5, 5}, {4, 3, 3, 3}, {{"group", int64_t{2}}, {"strides", V{2, 2}}}, false},
      {{1, 2, 6, 5},
       {2, 3, 3, 2},
       {{"dilations", V{2, 3}},
        {"pads", V{1, 0, 2, 1}},
        {"output_padding", V{1, 0}},
        {"strides", V{2, 3}}},
       true},
      {{1, 2, 4, 5},
       {2, 2, 3, 3},
       {{"auto_pad", std::string("SAME_UPPER")}, {"strides", V{2, 2}}},
       true},
      {{1, 2, 4, 4}, {2, 1, 3, 3}, {{"output_shape", V{9, 10}}, {"strides", V{2, 2}}}, true},
      {{1, 6, 5, 5}, {6, 1, 3, 3}, {{"group", int64_t{6}}, {"pads", V{1, 1, 1, 1}}}, true},
      {{2, 3, 7}, {3, 2, 4}, {{"strides", V{3}}}, true},                          // 1-D
      {{1, 2, 3, 4, 3}, {2, 3, 2, 3, 2}, {{"pads", V{0, 1, 1, 1, 0, 0}}}, true},  // 3-D
      {{1, 3, 6, 6}, {3, 2, 3, 3}, {{"strides", V{2, 2}}}, true, DataType::kFloat64},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(dimsToString(c.x) + " * " + dimsToString(c.w));
    std::vector<TensorValue> in{randomTensor(c.dt, c.x, rng), randomTensor(c.dt, c.w, rng)};
    if (c.bias) {
      const int64_t group = c.attrs.count("group") ? std::get<int64_t>(c.attrs.at("group")) : 1;
      in.push_back(randomTensor(c.dt, {c.w[1] * group}, rng));
    }
    auto fast = runKernel(*contribRegistry(), "ai.onnx::ConvTranspose", c.attrs, in, 0xff);
    ops::ScopedNaiveKernels naive(true);
    auto ref = runKernel(*contribRegistry(), "ai.onnx::ConvTranspose", c.attrs, in, 0x00);
    ASSERT_TRUE(fast.isOk() && ref.isOk())
        << (fast.isOk() ? ref.status().message() : fast.status().message());
    EXPECT_TRUE(allClose(fast->outputs[0], ref->outputs[0], {1e-5, 1e-5}));
  }
}
