// ai.onnx::DynamicQuantizeLinear on the CPU: the ONNX spec's example, hand-checked, an all-zero
// input (scale 1 / 255), and an input of the wrong type named with the node.
#include <gtest/gtest.h>

#include "op_harness.h"

using namespace opforge;
using namespace opforge::test;

TEST(DynamicQuantizeLinear, ScaleZeroPointAndValues) {
  // [0, 2, -3, -2.5, 1.34, 0.5]: lo -3, hi 2, scale 5/255, zero point rint(153) = 153.
  auto r = runKernel(*Registry::global(), "ai.onnx::DynamicQuantizeLinear", {},
                     {fromFloats({6}, {0, 2, -3, -2.5f, 1.34f, 0.5f})}, 0xff);
  ASSERT_TRUE(r.isOk()) << r.status().message();
  EXPECT_EQ(toDoubles(r->outputs[0]), (std::vector<double>{153, 255, 0, 26, 221, 179}));
  EXPECT_FLOAT_EQ(static_cast<float>(toDoubles(r->outputs[1])[0]), 5.0f / 255.0f);
  EXPECT_EQ(toDoubles(r->outputs[2])[0], 153);
  auto z = runKernel(*Registry::global(), "ai.onnx::DynamicQuantizeLinear", {},
                     {fromFloats({3}, {0, 0, 0})}, 0xff);
  ASSERT_TRUE(z.isOk()) << z.status().message();
  EXPECT_EQ(toDoubles(z->outputs[0]), (std::vector<double>{0, 0, 0}));
  EXPECT_FLOAT_EQ(static_cast<float>(toDoubles(z->outputs[1])[0]), 1.0f / 255.0f);
}

TEST(DynamicQuantizeLinear, BadInputIsNamed) {
  NetworkDefinition net(Registry::global());
  auto x = *net.addInput("x", DataType::kFloat16, {4});
  Status st = net.addOp("ai.onnx::DynamicQuantizeLinear", {x}, {}, "dq_node").status();
  ASSERT_FALSE(st.isOk());
  EXPECT_NE(st.message().find("dq_node"), std::string::npos) << st.message();
  EXPECT_NE(st.message().find("FP16"), std::string::npos) << st.message();
}
