// ai.onnx::Upsample on the CPU: the opset 7 form (scales attribute) and the opset 9 form (scales
// input) against hand-checked values, and bad input named with the node, the op and the value.
#include <gtest/gtest.h>

#include "op_harness.h"

using namespace opforge;
using namespace opforge::test;

namespace {

const char* kUp = "ai.onnx::Upsample";

}  // namespace

TEST(Upsample, NearestAndLinearAsAnOpset10Resize) {
  TensorValue x = fromFloats({1, 2}, {1, 3});
  // Nearest, scales as an attribute: each element repeated.
  auto r = runKernel(*Registry::global(), kUp, {{"scales", std::vector<float>{2, 2}}}, {x}, 0xff);
  ASSERT_TRUE(r.isOk()) << r.status().message();
  ASSERT_EQ(r->outputs[0].desc.dims, (std::vector<int64_t>{2, 4}));
  EXPECT_EQ(toDoubles(r->outputs[0]), (std::vector<double>{1, 1, 3, 3, 1, 1, 3, 3}));
  // Linear, scales as an input: x = o / 2 (asymmetric), the right edge repeated.
  auto l = runKernel(*Registry::global(), kUp, {{"mode", std::string("linear")}},
                     {x, fromFloats({2}, {1, 2})}, 0xff);
  ASSERT_TRUE(l.isOk()) << l.status().message();
  EXPECT_EQ(toDoubles(l->outputs[0]), (std::vector<double>{1, 2, 3, 3}));
}

TEST(Upsample, BadInputIsNamed) {
  NetworkDefinition net(Registry::global());
  auto x = *net.addInput("x", DataType::kFloat32, {1, 2, 3});
  auto s = *net.addConstant("s", fromFloats({3}, {1, 2, 2}));
  auto s_small = *net.addConstant("s_small", fromFloats({3}, {1, 0.5f, 2}));
  auto s_short = *net.addConstant("s_short", fromFloats({2}, {2, 2}));
  expectError(net.addOp(kUp, {x, s}, {{"mode", std::string("cubic")}}, "up_node").status(),
              {"up_node", "ai.onnx::Upsample", "'mode'", "cubic"});
  expectError(net.addOp(kUp, {x, s_small}, {}, "up_node").status(),
              {"up_node", "'scales' value 0.5", "axis 1", ">= 1"});
  expectError(net.addOp(kUp, {x, s_short}, {}, "up_node").status(),
              {"up_node", "2 values for an input of rank 3"});
  expectError(net.addOp(kUp, {x, s}, {{"scales", std::vector<float>{1, 2, 2}}}, "up_node").status(),
              {"up_node", "both as an attribute and as an input"});
  expectError(net.addOp(kUp, {x}, {}, "up_node").status(), {"up_node", "'scales' is missing"});
}
