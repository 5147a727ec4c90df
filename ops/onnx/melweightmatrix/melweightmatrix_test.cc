// ai.onnx::MelWeightMatrix on the CPU: a small matrix with fractional weights against ONNX's
// reference implementation, integer output types (truncated), and bad input named with the node,
// the op, the input and the value — at build time for constants, at run time otherwise.
#include <gtest/gtest.h>

#include "op_harness.h"

using namespace opforge;
using namespace opforge::test;

namespace {

const char* kMel = "ai.onnx::MelWeightMatrix";

std::vector<TensorValue> scalars(int64_t bins, int64_t dft, int64_t rate, double lo, double hi) {
  return {fromInt64s({}, {bins}), fromInt64s({}, {dft}), fromInt64s({}, {rate}),
          fromValues(DataType::kFloat32, {}, {lo}), fromValues(DataType::kFloat32, {}, {hi})};
}

}  // namespace

TEST(MelWeightMatrix, MatchesOnnxsReference) {
  // 3 mel bins, DFT 32 (17 spectrogram bins), 1 kHz up to Nyquist: points 0, 2, 5, 8, 12.
  // (onnx.reference.ops.op_mel_weight_matrix, output_datatype DOUBLE, transposed.)
  const std::vector<std::vector<double>> cols = {
      {0, 0.5, 1, 2.0 / 3, 1.0 / 3, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0},
      {0, 0, 0, 1.0 / 3, 2.0 / 3, 1, 2.0 / 3, 1.0 / 3, 0, 0, 0, 0, 0, 0, 0, 0, 0},
      {0, 0, 0, 0, 0, 0, 1.0 / 3, 2.0 / 3, 1, 0.75, 0.5, 0.25, 0, 0, 0, 0, 0}};
  auto r = runKernel(*Registry::global(), kMel, {{"output_datatype", int64_t{11}}},
                     scalars(3, 32, 1000, 0, 500), 0xff);
  ASSERT_TRUE(r.isOk()) << r.status().message();
  ASSERT_EQ(r->outputs[0].desc.dtype, DataType::kFloat64);
  ASSERT_EQ(r->outputs[0].desc.dims, (std::vector<int64_t>{17, 3}));
  const auto got = toDoubles(r->outputs[0]);
  for (size_t j = 0; j < 17; ++j)
    for (size_t i = 0; i < 3; ++i) EXPECT_NEAR(got[j * 3 + i], cols[i][j], 1e-15) << j << ", " << i;
  // INT32 output: the weights truncate, only the peaks (bins 2, 5, 8) stay.
  auto ri = runKernel(*Registry::global(), kMel, {{"output_datatype", int64_t{6}}},
                      scalars(3, 32, 1000, 0, 500), 0xff);
  ASSERT_TRUE(ri.isOk()) << ri.status().message();
  const auto ints = toDoubles(ri->outputs[0]);
  for (size_t j = 0; j < 17; ++j)
    for (size_t i = 0; i < 3; ++i)
      EXPECT_EQ(ints[j * 3 + i], cols[i][j] == 1 ? 1 : 0) << j << ", " << i;
}

TEST(MelWeightMatrix, OnnxNodeTestAndOddLengths) {
  // ONNX's node test: 8 bins, DFT 16, 8192 Hz, 0 to 4096 Hz; INT32 scalars; FLOAT by default.
  auto r =
      runKernel(*Registry::global(), kMel, {},
                {fromValues(DataType::kInt32, {}, {8}), fromValues(DataType::kInt32, {}, {16}),
                 fromValues(DataType::kInt32, {}, {8192}), fromValues(DataType::kFloat32, {}, {0}),
                 fromValues(DataType::kFloat32, {}, {4096})},
                0xff);
  ASSERT_TRUE(r.isOk()) << r.status().message();
  ASSERT_EQ(r->outputs[0].desc.dtype, DataType::kFloat32);
  ASSERT_EQ(r->outputs[0].desc.dims, (std::vector<int64_t>{9, 8}));
  const auto got = toDoubles(r->outputs[0]);
  // Peaks at spectrogram bins 0, 0, 1, 1, 2, 3, 4, 5: no fractions at this resolution.
  const int peak[8] = {0, 0, 1, 1, 2, 3, 4, 5};
  for (int j = 0; j < 9; ++j)
    for (int i = 0; i < 8; ++i) EXPECT_EQ(got[j * 8 + i], peak[i] == j ? 1 : 0) << j << ", " << i;
  // An odd DFT length: floor(63 / 2) + 1 = 32 rows.
  auto odd = runKernel(*Registry::global(), kMel, {}, scalars(10, 63, 8000, 300, 3800), 0xff);
  ASSERT_TRUE(odd.isOk()) << odd.status().message();
  EXPECT_EQ(odd->outputs[0].desc.dims, (std::vector<int64_t>{32, 10}));
}

TEST(MelWeightMatrix, BadConstantsAreNamedAtBuildTime) {
  NetworkDefinition net(Registry::global());
  int n = 0;
  auto add = [&](int64_t bins, int64_t dft, int64_t rate, double lo, double hi,
                 const Attrs& attrs = {}) {
    std::vector<TensorRef> refs;
    for (const auto& t : scalars(bins, dft, rate, lo, hi))
      refs.push_back(*net.addConstant("c" + std::to_string(n++), t));
    return net.addOp(kMel, refs, attrs, "mel_node").status();
  };
  expectError(add(0, 16, 8000, 0, 4000),
              {"mel_node", "ai.onnx::MelWeightMatrix", "input 'num_mel_bins' must be > 0, got 0"});
  expectError(add(8, -4, 8000, 0, 4000), {"mel_node", "input 'dft_length' must be > 0, got -4"});
  expectError(add(8, 16, 0, 0, 0.5), {"mel_node", "input 'sample_rate' must be > 0, got 0"});
  expectError(add(8, 16, 8000, -10, 4000),
              {"mel_node", "input 'lower_edge_hertz' must be >= 0, got -10"});
  expectError(add(8, 16, 8000, 3000, 3000), {"mel_node",
                                             "input 'lower_edge_hertz' (3000) must be below input "
                                             "'upper_edge_hertz' (3000)"});
  expectError(add(8, 16, 8000, 0, 4000.5),
              {"mel_node",
               "input 'upper_edge_hertz' (4000.5) must be at most sample_rate / 2 "
               "(4000)"});
  expectError(add(8, 16, 8000, 0, 4000, {{"output_datatype", int64_t{9}}}),
              {"mel_node", "output_datatype 9"});
  // Not scalars, wrong types, unknown values.
  auto two = *net.addConstant("two", fromInt64s({2}, {8, 8}));
  auto c = [&](const TensorValue& t) { return *net.addConstant("k" + std::to_string(n++), t); };
  const auto s = scalars(8, 16, 8000, 0, 4000);
  expectError(net.addOp(kMel, {two, c(s[1]), c(s[2]), c(s[3]), c(s[4])}, {}, "mel_node").status(),
              {"mel_node", "input 'num_mel_bins' must be a scalar, got [2]"});
  expectError(
      net.addOp(kMel, {c(s[3]), c(s[1]), c(s[2]), c(s[3]), c(s[4])}, {}, "mel_node").status(),
      {"mel_node", "input 'num_mel_bins' must be INT32 or INT64, got FP32"});
  expectError(
      net.addOp(kMel, {c(s[0]), c(s[1]), c(s[2]), c(s[0]), c(s[4])}, {}, "mel_node").status(),
      {"mel_node", "input 'lower_edge_hertz' must be a float type, got INT64"});
  auto dyn = *net.addInput("dyn", DataType::kInt64, {});
  expectError(net.addOp(kMel, {dyn, c(s[1]), c(s[2]), c(s[3]), c(s[4])}, {}, "mel_node").status(),
              {"mel_node", "'num_mel_bins' must be known when the network is built"});
}

TEST(MelWeightMatrix, BadRunTimeValuesAreNamed) {
  // sample_rate and the edges as network inputs: checked when the layer runs.
  auto reg = Registry::global();
  NetworkDefinition net(reg);
  auto bins = *net.addConstant("bins", fromInt64s({}, {8}));
  auto dft = *net.addConstant("dft", fromInt64s({}, {16}));
  auto rate = *net.addInput("rate", DataType::kInt64, {});
  auto lo = *net.addInput("lo", DataType::kFloat32, {});
  auto hi = *net.addInput("hi", DataType::kFloat32, {});
  auto y = net.addOp(kMel, {bins, dft, rate, lo, hi}, {}, "mel_node");
  ASSERT_TRUE(y.isOk()) << y.status().message();
  ASSERT_TRUE(net.markOutput((*y)[0], "y").isOk());
  auto plan = Builder(reg).buildSerializedNetwork(net, BuilderConfig{});
  ASSERT_TRUE(plan.isOk()) << plan.status().message();
  auto engine = Engine::loadMemory(std::move(*plan), "mel", reg);
  ASSERT_TRUE(engine.isOk()) << engine.status().message();
  auto ctx = std::move((*engine)->createExecutionContext()).value();
  auto run = [&](int64_t r, float l, float h) {
    EXPECT_TRUE(ctx->setInput("rate", &r, 8).isOk());
    EXPECT_TRUE(ctx->setInput("lo", &l, 4).isOk());
    EXPECT_TRUE(ctx->setInput("hi", &h, 4).isOk());
    return ctx->execute();
  };
  Status ok = run(8192, 0, 4096);
  EXPECT_TRUE(ok.isOk()) << ok.message();
  expectError(run(8192, 500, 400), {"mel_node",
                                    "input 'lower_edge_hertz' (500) must be below input "
                                    "'upper_edge_hertz' (400)"});
  expectError(
      run(1000, 0, 4096),
      {"mel_node", "input 'upper_edge_hertz' (4096) must be at most sample_rate / 2 (500)"});
  expectError(run(-5, 0, 4096), {"mel_node", "input 'sample_rate' must be > 0, got -5"});
}
