// ai.onnx::LSTM on the CPU: one step worked out by hand (peepholes, biases, initial state), the
// state of a row with sequence length 0, and bad input named with the node, the op and the value.
#include <gtest/gtest.h>

#include <cmath>

#include "op_harness.h"

using namespace opforge;
using namespace opforge::test;

namespace {
double sigmoid(double v) {
  return 1 / (1 + std::exp(-v));
}
}  // namespace

TEST(Lstm, OneStepByHand) {
  // hidden 1, input 1; gates i, o, f, c; W = (1, 2, 3, 4), R = (0.5, 0.25, -0.5, 1), B: Wb = 0.1
  // for every gate, Rb = 0; P = (0.3, 0.2, 0.1) for i, o, f; h0 = 0.4, c0 = -0.6; x = 0.5.
  const Attrs a{{"hidden_size", int64_t{1}}};
  auto r = runEngine(Registry::global(), "ai.onnx::LSTM", a,
                     {fromFloats({1, 1, 1}, {0.5f}), fromFloats({1, 4, 1}, {1, 2, 3, 4}),
                      fromFloats({1, 4, 1}, {0.5f, 0.25f, -0.5f, 1}),
                      fromFloats({1, 8}, {0.1f, 0.1f, 0.1f, 0.1f, 0, 0, 0, 0}),
                      fromInt64s({1}, {1}), fromFloats({1, 1, 1}, {0.4f}),
                      fromFloats({1, 1, 1}, {-0.6f}), fromFloats({1, 3}, {0.3f, 0.2f, 0.1f})});
  ASSERT_TRUE(r.isOk()) << r.status().message();
  const double x = 0.5, h = double(0.4f), c = double(-0.6f), b = double(0.1f);
  const double i = sigmoid(1 * x + 0.5 * h + double(0.3f) * c + b);
  const double f = sigmoid(3 * x - 0.5 * h + double(0.1f) * c + b);
  const double g = std::tanh(4 * x + 1 * h + b);
  const double cn = f * c + i * g;
  const double o = sigmoid(2 * x + 0.25 * h + double(0.2f) * cn + b);
  const double hn = o * std::tanh(cn);
  ASSERT_EQ(r->outputs.size(), 3u);
  EXPECT_NEAR(toDoubles(r->outputs[0])[0], hn, 1e-6);
  EXPECT_NEAR(toDoubles(r->outputs[1])[0], hn, 1e-6);
  EXPECT_NEAR(toDoubles(r->outputs[2])[0], cn, 1e-6);
}

TEST(Lstm, ARowOfLengthZeroKeepsItsInitialState) {
  std::mt19937_64 rng(3);
  const Attrs a{{"hidden_size", int64_t{2}}};
  const TensorValue h0 = randomTensor(DataType::kFloat32, {1, 2, 2}, rng),
                    c0 = randomTensor(DataType::kFloat32, {1, 2, 2}, rng);
  auto r =
      runEngine(Registry::global(), "ai.onnx::LSTM", a,
                {randomTensor(DataType::kFloat32, {3, 2, 2}, rng),
                 randomTensor(DataType::kFloat32, {1, 8, 2}, rng),
                 randomTensor(DataType::kFloat32, {1, 8, 2}, rng),
                 randomTensor(DataType::kFloat32, {1, 16}, rng), fromInt64s({2}, {3, 0}), h0, c0});
  ASSERT_TRUE(r.isOk()) << r.status().message();
  const auto y = toDoubles(r->outputs[0]), yh = toDoubles(r->outputs[1]),
             yc = toDoubles(r->outputs[2]), h = toDoubles(h0), c = toDoubles(c0);
  for (int64_t j = 0; j < 2; ++j) {
    EXPECT_EQ(yh[2 + j], h[2 + j]);  // row 1: no step
    EXPECT_EQ(yc[2 + j], c[2 + j]);
    EXPECT_NE(yh[j], h[j]);  // row 0: three steps
    for (int64_t t = 0; t < 3; ++t) EXPECT_EQ(y[(t * 2 + 1) * 2 + j], 0.0);
  }
}

TEST(Lstm, BadInputIsNamed) {
  NetworkDefinition net(Registry::global());
  auto x = *net.addInput("x", DataType::kFloat32, {5, 2, 3});
  auto w = *net.addInput("w", DataType::kFloat32, {1, 16, 3});
  auto r = *net.addInput("r", DataType::kFloat32, {1, 16, 4});
  auto b = *net.addInput("b", DataType::kFloat32, {1, 32});
  auto lens = *net.addInput("lens", DataType::kInt32, {2});
  auto lens_f = *net.addInput("lens_f", DataType::kFloat32, {2});
  auto h0 = *net.addInput("h0", DataType::kFloat32, {1, 2, 4});
  auto c0 = *net.addInput("c0", DataType::kFloat32, {2, 1, 4});
  auto p = *net.addInput("p", DataType::kFloat32, {1, 9});
  const Attrs ok{{"hidden_size", int64_t{4}}};
  expectError(net.addOp("ai.onnx::LSTM", {x, w, r, b, lens, h0, h0, p}, ok, "lstm_node").status(),
              {"lstm_node", "ai.onnx::LSTM", "input 'P' must have shape", "9 vs 12"});
  expectError(net.addOp("ai.onnx::LSTM", {x, w, r, b, lens, h0, c0}, ok, "lstm_node").status(),
              {"lstm_node", "input 'initial_c' must have shape"});
  expectError(net.addOp("ai.onnx::LSTM", {x, w, r, b, lens_f}, ok, "lstm_node").status(),
              {"lstm_node", "'sequence_lens' must be INT32 or INT64", "FP32"});
  expectError(net.addOp("ai.onnx::LSTM", {x, w, r},
                        {{"hidden_size", int64_t{4}}, {"input_forget", int64_t{2}}}, "lstm_node")
                  .status(),
              {"lstm_node", "'input_forget' must be 0 or 1, got 2"});
  expectError(net.addOp("ai.onnx::LSTM", {x, w, r},
                        {{"hidden_size", int64_t{4}}, {"direction", std::string("bidirectional")}},
                        "lstm_node")
                  .status(),
              {"lstm_node", "input 'W' must have shape", "2 direction(s)", "1 vs 2"});
}
