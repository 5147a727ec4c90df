// ai.onnx::CausalConvWithState on the CPU: hand-computed outputs and states (with and without
// past_state and bias, L < K - 1, K = 1, SiLU), and bad shapes and attributes named with the node,
// the op, the input and the dims.
#include <gtest/gtest.h>

#include <cmath>

#include "op_harness.h"

using namespace opforge;
using namespace opforge::test;

namespace {

const char* kOp = "ai.onnx::CausalConvWithState";

struct Out {
  std::vector<int64_t> y_dims, s_dims;
  std::vector<double> y, s;
};

Out run(const std::vector<TensorValue>& in, const Attrs& attrs = {}) {
  auto r = runKernel(*Registry::global(), kOp, attrs, in, 0xff);
  EXPECT_TRUE(r.isOk()) << r.status().message();
  if (!r) return {};
  return {r->outputs[0].desc.dims, r->outputs[1].desc.dims, toDoubles(r->outputs[0]),
          toDoubles(r->outputs[1])};
}

TensorValue none() {
  return TensorValue{};
}

}  // namespace

TEST(CausalConvWithState, HandComputedOutputsAndStates) {
  // input [1, 2, 3, 4], weight [1, 10, 100] (K = 3). No state: P = [0, 0, 1, 2, 3, 4].
  const TensorValue x = fromFloats({1, 1, 4}, {1, 2, 3, 4}),
                    w = fromFloats({1, 1, 3}, {1, 10, 100});
  Out a = run({x, w});
  EXPECT_EQ(a.y_dims, (std::vector<int64_t>{1, 1, 4}));
  EXPECT_EQ(a.s_dims, (std::vector<int64_t>{1, 1, 2}));
  EXPECT_EQ(a.y, (std::vector<double>{100, 210, 321, 432}));
  EXPECT_EQ(a.s, (std::vector<double>{3, 4}));
  // past_state [5, 6] and bias 0.5: P = [5, 6, 1, 2, 3, 4].
  Out b = run({x, w, fromFloats({1}, {0.5f}), fromFloats({1, 1, 2}, {5, 6})});
  EXPECT_EQ(b.y, (std::vector<double>{165.5, 216.5, 321.5, 432.5}));
  EXPECT_EQ(b.s, (std::vector<double>{3, 4}));
  // past_state without bias (bias omitted in the middle).
  Out c = run({x, w, none(), fromFloats({1, 1, 2}, {5, 6})});
  EXPECT_EQ(c.y, (std::vector<double>{165, 216, 321, 432}));
  // L = 1 < K - 1 = 3: P = [1, 2, 3, 7]; the new state keeps two past positions.
  Out d = run({fromFloats({1, 1, 1}, {7}), fromFloats({1, 1, 4}, {1, 1, 1, 1}), none(),
               fromFloats({1, 1, 3}, {1, 2, 3})});
  EXPECT_EQ(d.y, (std::vector<double>{13}));
  EXPECT_EQ(d.s, (std::vector<double>{2, 3, 7}));
  // Two channels, two batches: each channel its own kernel; L = 2 < K - 1 without a state.
  Out e = run({fromFloats({2, 2, 2}, {1, 2, 3, 4, 5, 6, 7, 8}),
               fromFloats({2, 1, 4}, {1, 2, 3, 4, -1, -2, -3, -4})});
  // Channel 0, P = [0, 0, 0, x0, x1]: t0 = 4 x0, t1 = 3 x0 + 4 x1; channel 1 the negation.
  EXPECT_EQ(e.y, (std::vector<double>{4, 11, -12, -25, 20, 39, -28, -53}));
  EXPECT_EQ(e.s, (std::vector<double>{0, 1, 2, 0, 3, 4, 0, 5, 6, 0, 7, 8}));
}

TEST(CausalConvWithState, KernelSizeOneAndSilu) {
  // K = 1: a per-channel scale; the state is empty.
  Out a = run({fromFloats({1, 2, 3}, {1, 2, 3, 4, 5, 6}), fromFloats({2, 1, 1}, {2, -1})});
  EXPECT_EQ(a.s_dims, (std::vector<int64_t>{1, 2, 0}));
  EXPECT_EQ(a.y, (std::vector<double>{2, 4, 6, -4, -5, -6}));
  EXPECT_TRUE(a.s.empty());
  // SiLU (and its alias swish) of the convolution: x sigmoid(x).
  for (const char* act : {"silu", "swish"}) {
    Out s = run({fromFloats({1, 1, 3}, {1, -1, 0}), fromFloats({1, 1, 1}, {1})},
                {{"activation", std::string(act)}});
    ASSERT_EQ(s.y.size(), 3u);
    EXPECT_NEAR(s.y[0], 1 / (1 + std::exp(-1.0)), 1e-7) << act;
    EXPECT_NEAR(s.y[1], -1 / (1 + std::exp(1.0)), 1e-7) << act;
    EXPECT_EQ(s.y[2], 0) << act;
  }
  // FP16: the convolution is rounded to FP16 before the activation.
  Out h = run({fromValues(DataType::kFloat16, {1, 1, 2}, {0.5, 1.5}),
               fromValues(DataType::kFloat16, {1, 1, 2}, {2, 4})},
              {{"activation", std::string("none")}});
  EXPECT_EQ(h.y, (std::vector<double>{2, 7}));
  EXPECT_EQ(h.s, (std::vector<double>{1.5}));
}

TEST(CausalConvWithState, BadInputIsNamed) {
  NetworkDefinition net(Registry::global());
  auto in = [&](const char* name, std::vector<int64_t> dims, DataType t = DataType::kFloat32) {
    return *net.addInput(name, t, dims);
  };
  auto x = in("x", {2, 4, 8}), w = in("w", {4, 1, 3}), b = in("b", {4});
  auto add = [&](std::vector<TensorRef> ins, const Attrs& attrs = {}) {
    return net.addOp(kOp, ins, attrs, "cc_node").status();
  };
  expectError(add({x, in("w5", {5, 1, 3})}),
              {"cc_node", "ai.onnx::CausalConvWithState",
               "input 'weight' dim 0 must equal the channels of input 'input' (dim 1) (5 vs 4)"});
  expectError(add({x, in("w2", {4, 2, 3})}),
              {"cc_node", "input 'weight' dim 1 must be 1 (depthwise) (2 vs 1)"});
  expectError(add({x, in("w0", {4, 1, 0})}),
              {"cc_node", "input 'weight' dim 2 (the kernel size k) must be >= 1, got 0"});
  expectError(add({x, in("w4", {4, 3})}),
              {"cc_node", "input 'weight' must have rank 3 [channels, 1, k], got [4, 3]"});
  expectError(add({in("x2", {4, 8}), w}), {"cc_node", "input 'input' must have rank 3"});
  expectError(add({x, w, in("b3", {3})}),
              {"cc_node", "input 'bias' dim 0 must equal the channels of input 'input' (dim 1)",
               "(3 vs 4)"});
  expectError(add({x, w, b, in("p3", {2, 4, 3})}),
              {"cc_node", "input 'past_state' dim 2 must equal k - 1", "(3 vs 2)"});
  expectError(add({x, w, b, in("p1", {1, 4, 2})}),
              {"cc_node", "input 'past_state' dim 0 must equal the batch size", "(1 vs 2)"});
  expectError(add({x, w, b, in("p5", {2, 5, 2})}),
              {"cc_node", "input 'past_state' dim 1 must equal the channels", "(5 vs 4)"});
  expectError(add({x, in("wh", {4, 1, 3}, DataType::kFloat16)}),
              {"cc_node", "input 'weight' has data type FP16, input 'input' FP32"});
  expectError(add({x, w}, {{"activation", std::string("relu")}}),
              {"cc_node", "attribute 'activation' must be 'none', 'silu' or 'swish', got 'relu'"});
  Status st = add({in("xi", {2, 4, 8}, DataType::kInt32), in("wi", {4, 1, 3}, DataType::kInt32)});
  EXPECT_EQ(st.code(), StatusCode::kUnsupported) << st.message();
  // Good shapes: output [2, 4, 8], present_state [2, 4, 2].
  auto r = net.addOp(kOp, {x, w, b, in("p", {2, 4, 2})}, {}, "cc_ok");
  ASSERT_TRUE(r.isOk()) << r.status().message();
  EXPECT_EQ(net.shapeOf((*r)[0]), "[2, 4, 8]");
  EXPECT_EQ(net.shapeOf((*r)[1]), "[2, 4, 2]");
}
