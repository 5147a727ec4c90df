// Conv: the im2col + OpenBLAS path against the direct reference loop over strides, dilations,
// padding modes and groups; a hand-computed case; BatchNormalization folded into Conv by the
// batchnorm_into_conv pass gives the unfolded result.
#include <gtest/gtest.h>

#include <cmath>

#include "op_harness.h"
#include "ops/onnx/common/gemm.h"
#include "ops/onnx/conv/conv_cpu.h"

using namespace opforge;
using namespace opforge::test;

using NaiveKernels = ops::ScopedNaiveKernels;

TEST(Conv, DirectSumsOnAKnownCase) {
  // 3x3 input 1..9, 2x2 kernel of ones, stride 1, no padding: window sums.
  auto r = runKernel(*contribRegistry(), "ai.onnx::Conv", {},
                     {fromFloats({1, 1, 3, 3}, {1, 2, 3, 4, 5, 6, 7, 8, 9}),
                      fromFloats({1, 1, 2, 2}, {1, 1, 1, 1})},
                     0xff);
  ASSERT_TRUE(r.isOk()) << r.status().message();
  EXPECT_EQ(toDoubles(r->outputs[0]), (std::vector<double>{12, 16, 24, 28}));
  NaiveKernels naive(true);
  auto n =
      runKernel(*contribRegistry(), "ai.onnx::Conv", {{"pads", std::vector<int64_t>{1, 1, 1, 1}}},
                {fromFloats({1, 1, 2, 2}, {1, 2, 3, 4}),
                 fromFloats({1, 1, 3, 3}, {0, 0, 0, 0, 1, 0, 0, 0, 2})},
                0xff);
  ASSERT_TRUE(n.isOk());
  // centre tap * x + corner tap (bottom-right) * the next diagonal element
  EXPECT_EQ(toDoubles(n->outputs[0]), (std::vector<double>{1 + 2 * 4, 2, 3, 4}));
}

TEST(Conv, FastPathMatchesTheReference) {
  std::mt19937_64 rng(17);
  struct Case {
    std::vector<int64_t> x, w;
    Attrs attrs;
    bool bias;
  };
  const std::vector<Case> cases = {
      {{2, 3, 9, 8}, {4, 3, 3, 3}, {}, true},
      {{1, 4, 7, 7},
       {6, 2, 3, 3},
       {{"group", int64_t{2}}, {"strides", std::vector<int64_t>{2, 2}}},
       false},
      {{1, 2, 10, 9},
       {3, 2, 3, 2},
       {{"dilations", std::vector<int64_t>{2, 3}}, {"pads", std::vector<int64_t>{1, 0, 2, 1}}},
       true},
      {{2, 3, 8, 8}, {5, 3, 1, 1}, {}, true},  // 1x1: the input is its own column matrix
      {{1, 2, 6, 5},
       {2, 2, 3, 3},
       {{"auto_pad", std::string("SAME_UPPER")}, {"strides", std::vector<int64_t>{2, 2}}},
       true},
      {{1, 2, 6, 5}, {2, 2, 2, 2}, {{"auto_pad", std::string("SAME_LOWER")}}, false},
      {{1, 6, 5, 5},
       {6, 1, 3, 3},
       {{"group", int64_t{6}}, {"pads", std::vector<int64_t>{1, 1, 1, 1}}},
       true},                                                                 // depthwise
      {{2, 3, 11}, {4, 3, 4}, {{"strides", std::vector<int64_t>{3}}}, true},  // 1-D
      {{1, 2, 4, 5, 6},
       {3, 2, 2, 3, 2},
       {{"pads", std::vector<int64_t>{0, 1, 1, 1, 0, 0}}},
       true},  // 3-D
  };
  for (const auto& c : cases) {
    std::vector<TensorValue> in{randomTensor(DataType::kFloat32, c.x, rng),
                                randomTensor(DataType::kFloat32, c.w, rng)};
    if (c.bias) in.push_back(randomTensor(DataType::kFloat32, {c.w[0]}, rng));
    checkOp(contribRegistry(), "ai.onnx::Conv", c.attrs, in);
    auto fast = runKernel(*contribRegistry(), "ai.onnx::Conv", c.attrs, in, 0xff);
    NaiveKernels naive(true);
    auto ref = runKernel(*contribRegistry(), "ai.onnx::Conv", c.attrs, in, 0x00);
    ASSERT_TRUE(fast.isOk() && ref.isOk())
        << (fast.isOk() ? ref.status().message() : fast.status().message());
    EXPECT_TRUE(allClose(fast->outputs[0], ref->outputs[0], {1e-5, 1e-5}))
        << dimsToString(c.x) << " * " << dimsToString(c.w);
  }
}

TEST(Conv, BatchNormFoldedIntoConvGivesTheSameResult) {
  std::mt19937_64 rng(23);
  auto reg = Registry::global();
  auto x = randomTensor(DataType::kFloat32, {2, 3, 6, 6}, rng);
  auto build = [&](bool fold, bool second_consumer, int* layers,
                   std::string* names) -> TensorValue {
    std::mt19937_64 wrng(99);
    NetworkDefinition net(reg);
    auto in = *net.addInput("x", DataType::kFloat32, {2, 3, 6, 6});
    auto w = *net.addConstant("w", randomTensor(DataType::kFloat32, {4, 3, 3, 3}, wrng));
    auto b = *net.addConstant("b", randomTensor(DataType::kFloat32, {4}, wrng));
    auto conv = *net.addOp("ai.onnx::Conv", {in, w, b},
                           {{"pads", std::vector<int64_t>{1, 1, 1, 1}}}, "conv");
    auto s = *net.addConstant("s", randomTensor(DataType::kFloat32, {4}, wrng, 0.5, 1.5));
    auto bias = *net.addConstant("bias", randomTensor(DataType::kFloat32, {4}, wrng));
    auto mean = *net.addConstant("mean", randomTensor(DataType::kFloat32, {4}, wrng));
    auto var = *net.addConstant("var", randomTensor(DataType::kFloat32, {4}, wrng, 0.5, 2.0));
    auto bn = *net.addOp("ai.onnx::BatchNormalization", {conv[0], s, bias, mean, var},
                         {{"epsilon", 1e-3}}, "bn");
    auto relu = *net.addOp("ai.onnx::Relu", {bn[0]}, {}, "relu");
    EXPECT_TRUE(net.markOutput(relu[0], "y").isOk());
    if (second_consumer) {
      EXPECT_TRUE(net.markOutput(conv[0], "conv_out").isOk());
    }
    BuilderConfig cfg;
    cfg.constant_folding = fold;
    Builder builder(reg);
    auto plan = builder.buildSerializedNetwork(net, cfg);
    EXPECT_TRUE(plan.isOk()) << plan.status().message();
    auto engine = *Engine::loadMemory(std::move(*plan), "bn", reg);
    *layers = static_cast<int>(engine->layers().size());
    names->clear();
    for (const auto& l : engine->layers()) *names += l.name + ";";
    auto ctx = engine->createExecutionContext().value();
    EXPECT_TRUE(ctx->setInput("x", x.data.data(), x.data.size()).isOk());
    EXPECT_TRUE(ctx->execute().isOk());
    Tensor t = *ctx->output("y");
    TensorValue v;
    v.desc = t.desc;
    v.data.assign(static_cast<const uint8_t*>(t.data),
                  static_cast<const uint8_t*>(t.data) + t.bytes());
    return v;
  };
  int folded_layers, plain_layers, kept_layers;
  std::string folded_names, plain_names, kept_names;
  TensorValue folded = build(true, false, &folded_layers, &folded_names);
  TensorValue plain = build(false, false, &plain_layers, &plain_names);
  TensorValue kept = build(true, true, &kept_layers, &kept_names);
  EXPECT_EQ(plain_layers, 3) << plain_names;
  // BatchNormalization folds into the Conv, then conv_fusion takes the Relu: one FusedConv that
  // keeps every name.
  EXPECT_EQ(folded_layers, 1) << folded_names;
  EXPECT_NE(folded_names.find("conv+bn+relu;"), std::string::npos) << folded_names;
  EXPECT_EQ(kept_layers, 3) << kept_names;  // the Conv output is also a network output: no folding
  EXPECT_TRUE(allClose(folded, plain, {1e-5, 1e-5}));
  EXPECT_TRUE(allClose(kept, plain, {1e-5, 1e-5}));
}

TEST(Conv, LargeGeometryRunsInBoundedBlocks) {
  // The CPU kernels' tap table (taps x output positions) and the FP32 path's column matrix are
  // built for blocks of output positions (conv_cpu.h, kConvBlockEntries): a hostile geometry made
  // the whole table overflow int64 and ask for terabytes. Here a 33x33 kernel over 64x64
  // positions (4.5M taps x positions, over one block) on two groups: both CPU paths must match a
  // plain loop written here.
  std::mt19937_64 rng(29);
  const int64_t h = 64, k = 33, pad = 16;
  auto x = randomTensor(DataType::kFloat32, {1, 2, h, h}, rng);
  auto w = randomTensor(DataType::kFloat32, {2, 1, k, k}, rng);
  const Attrs attrs{{"group", int64_t{2}}, {"pads", std::vector<int64_t>{pad, pad, pad, pad}}};
  ASSERT_GT(k * k * h * h, ops::kConvBlockEntries);
  const float* px = reinterpret_cast<const float*>(x.data.data());
  const float* pw = reinterpret_cast<const float*>(w.data.data());
  std::vector<double> want(static_cast<size_t>(2 * h * h), 0.0);
  for (int64_t g = 0; g < 2; ++g)
    for (int64_t oy = 0; oy < h; ++oy)
      for (int64_t ox = 0; ox < h; ++ox) {
        double s = 0;
        for (int64_t ky = 0; ky < k; ++ky)
          for (int64_t kx = 0; kx < k; ++kx) {
            const int64_t iy = oy - pad + ky, ix = ox - pad + kx;
            if (iy >= 0 && iy < h && ix >= 0 && ix < h)
              s += static_cast<double>(px[(g * h + iy) * h + ix]) * pw[(g * k + ky) * k + kx];
          }
        want[(g * h + oy) * h + ox] = s;
      }
  for (bool naive : {false, true}) {
    NaiveKernels mode(naive);
    auto r = runKernel(*contribRegistry(), "ai.onnx::Conv", attrs, {x, w}, 0xff);
    ASSERT_TRUE(r.isOk()) << r.status().message();
    const auto got = toDoubles(r->outputs[0]);
    ASSERT_EQ(got.size(), want.size());
    for (size_t i = 0; i < got.size(); ++i)
      ASSERT_NEAR(got[i], want[i], 1e-4 * (1 + std::fabs(want[i])))
          << "naive " << naive << " at " << i;
  }
}
