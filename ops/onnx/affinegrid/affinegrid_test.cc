// ai.onnx::AffineGrid on the CPU: the identity matrix gives the base grid (hand-checked), and bad
// input named with the node, the op and the value.
#include <gtest/gtest.h>

#include "op_harness.h"

using namespace opforge;
using namespace opforge::test;

namespace {

const char* kAg = "ai.onnx::AffineGrid";

}  // namespace

TEST(AffineGrid, TheIdentityGivesTheBaseGrid) {
  TensorValue eye = fromFloats({1, 2, 3}, {1, 0, 0, 0, 1, 0});
  // H = 1, W = 2: centres x = -0.5, 0.5, y = 0; corners x = -1, 1, y = -1 (one row).
  auto r = runKernel(*Registry::global(), kAg, {}, {eye, fromInt64s({4}, {1, 1, 1, 2})}, 0xff);
  ASSERT_TRUE(r.isOk()) << r.status().message();
  ASSERT_EQ(r->outputs[0].desc.dims, (std::vector<int64_t>{1, 1, 2, 2}));
  EXPECT_EQ(toDoubles(r->outputs[0]), (std::vector<double>{-0.5, 0, 0.5, 0}));
  auto a = runKernel(*Registry::global(), kAg, {{"align_corners", int64_t{1}}},
                     {eye, fromInt64s({4}, {1, 1, 1, 2})}, 0xff);
  ASSERT_TRUE(a.isOk()) << a.status().message();
  EXPECT_EQ(toDoubles(a->outputs[0]), (std::vector<double>{-1, -1, 1, -1}));
}

TEST(AffineGrid, BadInputIsNamed) {
  NetworkDefinition net(Registry::global());
  auto th = *net.addInput("theta", DataType::kFloat32, {2, 2, 3});
  auto th3 = *net.addInput("theta3", DataType::kFloat32, {2, 3, 4});
  auto s4 = *net.addConstant("s4", fromInt64s({4}, {2, 1, 4, 4}));
  auto s3 = *net.addConstant("s3", fromInt64s({3}, {2, 4, 4}));
  auto sn = *net.addConstant("sn", fromInt64s({4}, {3, 1, 4, 4}));
  expectError(net.addOp(kAg, {th, s4}, {{"align_corners", int64_t{2}}}, "ag_node").status(),
              {"ag_node", "ai.onnx::AffineGrid", "align_corners must be 0 or 1, got 2"});
  expectError(net.addOp(kAg, {th, s3}, {}, "ag_node").status(),
              {"ag_node", "must hold 4 values", "got 3"});
  expectError(net.addOp(kAg, {th3, s4}, {}, "ag_node").status(),
              {"ag_node", "[N, 2, 3]", "3 vs 2"});
  expectError(net.addOp(kAg, {th, sn}, {}, "ag_node").status(),
              {"ag_node", "'size' N must equal theta's batch", "3 vs 2"});
}
