// ai.onnx::CenterCropPad on the CPU: a hand-checked crop and pad, and bad input named with the
// node, the op and the value.
#include <gtest/gtest.h>

#include "op_harness.h"

using namespace opforge;
using namespace opforge::test;

namespace {

const char* kCcp = "ai.onnx::CenterCropPad";

}  // namespace

TEST(CenterCropPad, CropsAndPadsCentred) {
  // [2, 5] -> [5, 2]: axis 0 padded by 3 (1 before, 2 after), axis 1 cropped by 3 (start 1).
  TensorValue x = fromFloats({2, 5}, {0, 1, 2, 3, 4, 5, 6, 7, 8, 9});
  auto r = runKernel(*Registry::global(), kCcp, {}, {x, fromInt64s({2}, {5, 2})}, 0xff);
  ASSERT_TRUE(r.isOk()) << r.status().message();
  ASSERT_EQ(r->outputs[0].desc.dims, (std::vector<int64_t>{5, 2}));
  EXPECT_EQ(toDoubles(r->outputs[0]), (std::vector<double>{0, 0, 1, 2, 6, 7, 0, 0, 0, 0}));
}

TEST(CenterCropPad, BadInputIsNamed) {
  NetworkDefinition net(Registry::global());
  auto x = *net.addInput("x", DataType::kFloat32, {4, 6});
  auto s2 = *net.addConstant("s2", fromInt64s({2}, {2, 2}));
  auto s1 = *net.addConstant("s1", fromInt64s({1}, {2}));
  auto neg = *net.addConstant("neg", fromInt64s({2}, {2, -3}));
  auto f = *net.addConstant("f", fromFloats({2}, {2, 2}));
  auto dyn = *net.addInput("dyn", DataType::kInt64, {2});
  expectError(net.addOp(kCcp, {x, s1}, {}, "ccp_node").status(),
              {"ccp_node", "ai.onnx::CenterCropPad", "1 values for 2 axes"});
  expectError(net.addOp(kCcp, {x, neg}, {}, "ccp_node").status(),
              {"ccp_node", "value -3 (axis 1) is negative"});
  expectError(net.addOp(kCcp, {x, s2}, {{"axes", std::vector<int64_t>{0, 2}}}, "ccp_node").status(),
              {"ccp_node", "axes value 2 is out of range"});
  expectError(
      net.addOp(kCcp, {x, s2}, {{"axes", std::vector<int64_t>{1, -1}}}, "ccp_node").status(),
      {"ccp_node", "lists axis 1 twice"});
  expectError(net.addOp(kCcp, {x, f}, {}, "ccp_node").status(),
              {"ccp_node", "'shape' must be INT32 or INT64", "FP32"});
  expectError(net.addOp(kCcp, {x, dyn}, {}, "ccp_node").status(),
              {"ccp_node", "'shape' must be known when the network is built"});
}
