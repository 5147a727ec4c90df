// ai.onnx::GRU on the CPU: one step worked out by hand for both linear_before_reset values, an ONNX
// node whose `activations` (a strings list) the importer hands over, and bad input named with the
// node, the op and the value.
#include <gtest/gtest.h>

#include <cmath>

#include "onnx_model.h"
#include "op_harness.h"

using namespace opforge;
using namespace opforge::test;

namespace {
double sigmoid(double v) {
  return 1 / (1 + std::exp(-v));
}
}  // namespace

TEST(Gru, OneStepByHand) {
  // hidden 1, input 1; gates z, r, h: W = (1, -1, 2), R = (0.5, 0.25, -0.75); Wb = (0, 0, 0.2),
  // Rb = (0, 0, 0.3); h0 = 0.6, x = 0.5.
  for (int64_t lbr : {0, 1}) {
    const Attrs a{{"hidden_size", int64_t{1}}, {"linear_before_reset", lbr}};
    auto r = runEngine(
        Registry::global(), "ai.onnx::GRU", a,
        {fromFloats({1, 1, 1}, {0.5f}), fromFloats({1, 3, 1}, {1, -1, 2}),
         fromFloats({1, 3, 1}, {0.5f, 0.25f, -0.75f}), fromFloats({1, 6}, {0, 0, 0.2f, 0, 0, 0.3f}),
         fromInt64s({1}, {1}), fromFloats({1, 1, 1}, {0.6f})});
    ASSERT_TRUE(r.isOk()) << r.status().message();
    const double x = 0.5, h = double(0.6f), wb = double(0.2f), rb = double(0.3f);
    const double z = sigmoid(x + 0.5 * h), rr = sigmoid(-x + 0.25 * h);
    const double hh = lbr ? std::tanh(2 * x + rr * (-0.75 * h + rb) + wb)
                          : std::tanh(2 * x + (rr * h) * -0.75 + rb + wb);
    const double hn = (1 - z) * hh + z * h;
    EXPECT_NEAR(toDoubles(r->outputs[0])[0], hn, 1e-6) << "linear_before_reset " << lbr;
    EXPECT_NEAR(toDoubles(r->outputs[1])[0], hn, 1e-6) << "linear_before_reset " << lbr;
  }
}

TEST(Gru, BadInputIsNamed) {
  NetworkDefinition net(Registry::global());
  auto x = *net.addInput("x", DataType::kFloat32, {5, 2, 3});
  auto x2 = *net.addInput("x2", DataType::kFloat32, {5, 3});
  auto w = *net.addInput("w", DataType::kFloat32, {1, 12, 3});
  auto r = *net.addInput("r", DataType::kFloat32, {1, 12, 4});
  auto b = *net.addInput("b", DataType::kFloat32, {1, 12});
  const Attrs ok{{"hidden_size", int64_t{4}}};
  expectError(net.addOp("ai.onnx::GRU", {x, w, r, b}, ok, "gru_node").status(),
              {"gru_node", "ai.onnx::GRU", "input 'B' must have shape", "12 vs 24"});
  expectError(net.addOp("ai.onnx::GRU", {x2, w, r}, ok, "gru_node").status(),
              {"gru_node", "input 'X' must have rank 3"});
  expectError(
      net.addOp("ai.onnx::GRU", {x, w, r},
                {{"hidden_size", int64_t{4}}, {"linear_before_reset", int64_t{-1}}}, "gru_node")
          .status(),
      {"gru_node", "'linear_before_reset' must be 0 or 1, got -1"});
  expectError(net.addOp("ai.onnx::GRU", {x, w, r},
                        {{"hidden_size", int64_t{4}}, {"layout", int64_t{2}}}, "gru_node")
                  .status(),
              {"gru_node", "'layout' must be 0 or 1, got 2"});
}

TEST(Gru, ImportsTheActivationsStringsList) {
  Model m;
  m.input("X", onnx::TensorProto::FLOAT, {2, 1, 3});
  m.input("W", onnx::TensorProto::FLOAT, {1, 6, 3});
  m.input("R", onnx::TensorProto::FLOAT, {1, 6, 2});
  m.output("Y_h");
  auto* n = m.node("GRU", {"X", "W", "R"}, {"", "Y_h"}, "gru_node");
  intAttr(n, "hidden_size", 2);
  auto* a = n->add_attribute();
  a->set_name("activations");
  a->set_type(onnx::AttributeProto::STRINGS);
  a->add_strings("HardSigmoid");
  a->add_strings("Softsign");
  auto* al = n->add_attribute();
  al->set_name("activation_alpha");
  al->set_type(onnx::AttributeProto::FLOATS);
  al->add_floats(0.3f);
  auto net = importOnnx(m.save("gru.onnx"));
  ASSERT_TRUE(net.isOk()) << net.status().message();
  // Three names for one direction: refused, naming the node and the count.
  a->add_strings("Tanh");
  auto bad = importOnnx(m.save("gru_bad.onnx"));
  expectError(bad.status(), {"gru_node", "'activations' must list 2 functions", "got 3"});
}
