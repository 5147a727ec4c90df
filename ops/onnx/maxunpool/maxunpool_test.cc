// ai.onnx::MaxUnpool on the CPU: bad input (index range, output_shape smaller than the unpooled
// shape, I's type) named with the node, the op and the value.
#include <gtest/gtest.h>

#include <cstring>

#include "op_harness.h"

using namespace opforge;
using namespace opforge::test;

namespace {
const Attrs kWin{{"kernel_shape", std::vector<int64_t>{2, 2}},
                 {"strides", std::vector<int64_t>{2, 2}}};
}  // namespace

TEST(MaxUnpool, BadInputIsNamed) {
  TensorValue x = fromFloats({1, 1, 2, 2}, {1, 2, 3, 4});
  auto r = runEngine(Registry::global(), "ai.onnx::MaxUnpool", kWin,
                     {x, fromInt64s({1, 1, 2, 2}, {0, 3, 16, 15})});
  ASSERT_FALSE(r.isOk());
  expectError(r.status(), {"MaxUnpool", "'I' holds 16 at position 2", "[0, 15]"});
  NetworkDefinition net(Registry::global());
  auto a = *net.addInput("x", DataType::kFloat32, {1, 1, 2, 2});
  auto i = *net.addInput("i", DataType::kInt64, {1, 1, 2, 2});
  auto i32 = *net.addInput("i32", DataType::kInt32, {1, 1, 2, 2});
  auto small = *net.addConstant("shape", fromInt64s({4}, {1, 1, 3, 5}));
  expectError(net.addOp("ai.onnx::MaxUnpool", {a, i, small}, kWin, "unpool_node").status(),
              {"unpool_node", "MaxUnpool", "'output_shape'", "smaller", "axis 2"});
  expectError(net.addOp("ai.onnx::MaxUnpool", {a, i32}, kWin, "unpool_node").status(),
              {"unpool_node", "'I'", "INT64", "INT32"});
  Attrs big_pads = kWin;
  big_pads["pads"] = std::vector<int64_t>{2, 0, 2, 0};
  expectError(net.addOp("ai.onnx::MaxUnpool", {a, i}, big_pads, "unpool_node").status(),
              {"unpool_node", "unpooled size", "axis 0 is 0"});
}
