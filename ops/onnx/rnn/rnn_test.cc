// ai.onnx::RNN on the CPU: a two-step sequence worked out by hand, layout 1 against layout 0, and
// bad input (direction, shapes, activations, sequence_lens) named with the node, the op and the
// value.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

#include "op_harness.h"

using namespace opforge;
using namespace opforge::test;

namespace {
TensorValue int32s(const std::vector<int64_t>& dims, const std::vector<int32_t>& v) {
  TensorValue t;
  t.desc = TensorDesc{DataType::kInt32, dims};
  t.data.resize(v.size() * 4);
  if (!v.empty()) std::memcpy(t.data.data(), v.data(), t.data.size());
  return t;
}
}  // namespace

TEST(Rnn, TwoStepsByHand) {
  // hidden 1, input 1: h1 = tanh(2 * 0.5 + 0.1 + 0.2), h2 = tanh(2 * -1 + 0.5 * h1 + 0.1 + 0.2).
  const Attrs a{{"hidden_size", int64_t{1}}};
  auto r = runEngine(Registry::global(), "ai.onnx::RNN", a,
                     {fromFloats({2, 1, 1}, {0.5f, -1.f}), fromFloats({1, 1, 1}, {2.f}),
                      fromFloats({1, 1, 1}, {0.5f}), fromFloats({1, 2}, {0.1f, 0.2f})});
  ASSERT_TRUE(r.isOk()) << r.status().message();
  const double h1 = std::tanh(2 * 0.5 + 0.1 + 0.2),
               h2 = std::tanh(2 * -1.0 + 0.5 * h1 + double(0.1f) + double(0.2f));
  const auto y = toDoubles(r->outputs[0]), yh = toDoubles(r->outputs[1]);
  ASSERT_EQ(y.size(), 2u);
  EXPECT_NEAR(y[0], h1, 1e-6);
  EXPECT_NEAR(y[1], h2, 1e-6);
  EXPECT_NEAR(yh[0], h2, 1e-6);
}

TEST(Rnn, Layout1IsLayout0Transposed) {
  std::mt19937_64 rng(7);
  const int64_t seq = 4, batch = 3, in = 2, hid = 3;
  TensorValue x0 = randomTensor(DataType::kFloat32, {seq, batch, in}, rng);
  TensorValue x1 = x0;  // [batch, seq, in]
  x1.desc.dims = {batch, seq, in};
  const auto* p0 = reinterpret_cast<const float*>(x0.data.data());
  auto* p1 = reinterpret_cast<float*>(x1.data.data());
  for (int64_t t = 0; t < seq; ++t)
    for (int64_t b = 0; b < batch; ++b)
      for (int64_t k = 0; k < in; ++k) p1[(b * seq + t) * in + k] = p0[(t * batch + b) * in + k];
  const TensorValue w = randomTensor(DataType::kFloat32, {2, hid, in}, rng),
                    r = randomTensor(DataType::kFloat32, {2, hid, hid}, rng);
  Attrs a{{"hidden_size", hid}, {"direction", std::string("bidirectional")}};
  auto out0 = runEngine(Registry::global(), "ai.onnx::RNN", a, {x0, w, r});
  a["layout"] = int64_t{1};
  auto out1 = runEngine(Registry::global(), "ai.onnx::RNN", a, {x1, w, r});
  ASSERT_TRUE(out0.isOk() && out1.isOk());
  const auto y0 = toDoubles(out0->outputs[0]), y1 = toDoubles(out1->outputs[0]);
  for (int64_t t = 0; t < seq; ++t)
    for (int64_t d = 0; d < 2; ++d)
      for (int64_t b = 0; b < batch; ++b)
        for (int64_t j = 0; j < hid; ++j)
          EXPECT_EQ(y0[((t * 2 + d) * batch + b) * hid + j], y1[((b * seq + t) * 2 + d) * hid + j]);
  const auto h0 = toDoubles(out0->outputs[1]), h1 = toDoubles(out1->outputs[1]);
  for (int64_t d = 0; d < 2; ++d)
    for (int64_t b = 0; b < batch; ++b)
      for (int64_t j = 0; j < hid; ++j)
        EXPECT_EQ(h0[(d * batch + b) * hid + j], h1[(b * 2 + d) * hid + j]);
}

TEST(Rnn, BadInputIsNamed) {
  NetworkDefinition net(Registry::global());
  auto x = *net.addInput("x", DataType::kFloat32, {5, 2, 3});
  auto w = *net.addInput("w", DataType::kFloat32, {1, 4, 3});
  auto r = *net.addInput("r", DataType::kFloat32, {1, 4, 4});
  auto w2 = *net.addInput("w2", DataType::kFloat32, {1, 6, 3});
  auto wh = *net.addInput("wh", DataType::kFloat16, {1, 4, 3});
  const Attrs ok{{"hidden_size", int64_t{4}}};
  expectError(
      net.addOp("ai.onnx::RNN", {x, w, r},
                {{"hidden_size", int64_t{4}}, {"direction", std::string("sideways")}}, "rnn_node")
          .status(),
      {"rnn_node", "ai.onnx::RNN", "'direction'", "sideways"});
  expectError(net.addOp("ai.onnx::RNN", {x, w2, r}, ok, "rnn_node").status(),
              {"rnn_node", "input 'W' must have shape", "6 vs 4"});
  expectError(net.addOp("ai.onnx::RNN", {x, wh, r}, ok, "rnn_node").status(),
              {"rnn_node", "input 'W' has type FP16", "FP32"});
  expectError(
      net.addOp("ai.onnx::RNN", {x, w, r}, {{"hidden_size", int64_t{5}}}, "rnn_node").status(),
      {"rnn_node", "hidden_size 5"});
  expectError(net.addOp("ai.onnx::RNN", {x, w, r},
                        {{"hidden_size", int64_t{4}}, {"activations", std::string("Tanh,Relu")}},
                        "rnn_node")
                  .status(),
              {"rnn_node", "'activations' must list 1 functions", "got 2"});
  expectError(
      net.addOp("ai.onnx::RNN", {x, w, r},
                {{"hidden_size", int64_t{4}}, {"activations", std::string("Swish")}}, "rnn_node")
          .status(),
      {"rnn_node", "'Swish'"});
  expectError(net.addOp("ai.onnx::RNN", {x, w, r}, {{"hidden_size", int64_t{4}}, {"clip", -1.0}},
                        "rnn_node")
                  .status(),
              {"rnn_node", "'clip'"});
  // A sequence length beyond X's: an error at run time naming the value and its position.
  std::mt19937_64 rng(1);
  auto run = runEngine(Registry::global(), "ai.onnx::RNN", ok,
                       {randomTensor(DataType::kFloat32, {5, 2, 3}, rng),
                        randomTensor(DataType::kFloat32, {1, 4, 3}, rng),
                        randomTensor(DataType::kFloat32, {1, 4, 4}, rng),
                        randomTensor(DataType::kFloat32, {1, 8}, rng), int32s({2}, {5, 9})});
  ASSERT_FALSE(run.isOk());
  expectError(run.status(), {"RNN", "'sequence_lens' holds 9 at position 1", "[0, 5]"});
}
