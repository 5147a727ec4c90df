// ai.onnx::SwiGLU on the CPU: hand-checked values and bad input named with the node and the op.
#include <gtest/gtest.h>

#include <cmath>

#include "op_harness.h"

using namespace opforge;
using namespace opforge::test;

namespace {}  // namespace

TEST(SwiGLU, GatesB) {
  auto r = runKernel(*Registry::global(), "ai.onnx::SwiGLU", {{"alpha", 2.0}},
                     {fromFloats({3}, {0, 1, -1}), fromFloats({3}, {5, 3, 2})}, 0xff);
  ASSERT_TRUE(r.isOk()) << r.status().message();
  const auto y = toDoubles(r->outputs[0]);
  EXPECT_EQ(y[0], 0);
  EXPECT_NEAR(y[1], 1 / (1 + std::exp(-2.0)) * 3, 1e-6);
  EXPECT_NEAR(y[2], -1 / (1 + std::exp(2.0)) * 2, 1e-6);
}

TEST(SwiGLU, BadInputIsNamed) {
  NetworkDefinition net(Registry::global());
  auto a = *net.addInput("a", DataType::kFloat32, {2, 4});
  auto b = *net.addInput("b", DataType::kFloat32, {2, 1});
  auto b16 = *net.addInput("b16", DataType::kFloat16, {2, 4});
  expectError(net.addOp("ai.onnx::SwiGLU", {a, b}, {}, "sg_node").status(),
              {"sg_node", "ai.onnx::SwiGLU", "one shape (axis 1)", "1 vs 4"});
  expectError(net.addOp("ai.onnx::SwiGLU", {a, b16}, {}, "sg_node").status(),
              {"sg_node", "one type", "FP32 and FP16"});
}
