// ai.onnx::HannWindow on the CPU: periodic and symmetric windows of 4 against hand-computed values,
// and bad input (common/window.h's checks) named with the node, the op and the value.
#include <gtest/gtest.h>

#include "op_harness.h"

using namespace opforge;
using namespace opforge::test;

namespace {

const char* kOp = "ai.onnx::HannWindow";

}  // namespace

TEST(HannWindow, PeriodicAndSymmetric) {
  const std::vector<std::vector<double>> want = {{0, 0.5, 1, 0.5}, {0, 0.75, 0.75, 0}};
  for (int64_t periodic : {1, 0}) {
    auto r = runKernel(*Registry::global(), kOp,
                       {{"periodic", periodic}, {"output_datatype", int64_t{11}}},
                       {fromInt64s({}, {4})}, 0xff);
    ASSERT_TRUE(r.isOk()) << r.status().message();
    ASSERT_EQ(r->outputs[0].desc.dtype, DataType::kFloat64);
    const auto got = toDoubles(r->outputs[0]);
    ASSERT_EQ(got.size(), 4u);
    for (size_t i = 0; i < 4; ++i)
      EXPECT_NEAR(got[i], want[periodic ? 0 : 1][i], 1e-12)
          << "periodic " << periodic << " at " << i;
  }
}

TEST(HannWindow, BadInputIsNamed) {
  NetworkDefinition net(Registry::global());
  auto four = *net.addConstant("four", fromInt64s({}, {4}));
  auto neg = *net.addConstant("neg", fromInt64s({}, {-2}));
  auto two = *net.addConstant("two", fromInt64s({2}, {4, 4}));
  auto dyn = *net.addInput("dyn", DataType::kInt64, {});
  expectError(net.addOp(kOp, {four}, {{"output_datatype", int64_t{8}}}, "w_node").status(),
              {"w_node", "ai.onnx::HannWindow", "output_datatype 8"});
  expectError(net.addOp(kOp, {four}, {{"periodic", int64_t{2}}}, "w_node").status(),
              {"w_node", "periodic must be 0 or 1, got 2"});
  expectError(net.addOp(kOp, {neg}, {}, "w_node").status(), {"w_node", "'size' is negative: -2"});
  expectError(net.addOp(kOp, {two}, {}, "w_node").status(), {"w_node", "'size' must be a scalar"});
  expectError(net.addOp(kOp, {dyn}, {}, "w_node").status(),
              {"w_node", "'size' must be known when the network is built"});
}
