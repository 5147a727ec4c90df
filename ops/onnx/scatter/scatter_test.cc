// ai.onnx::Scatter (opset 9 to 11) is ai.onnx::ScatterElements without `reduction`: the registry
// finds ScatterElements under both keys, a Scatter node replaces (never reduces), and its bad
// indices are ScatterElements' run-time error.
#include <gtest/gtest.h>

#include "op_harness.h"

using namespace opforge;
using namespace opforge::test;

TEST(Scatter, IsScatterElementsWithoutReduction) {
  const RegisteredOp* op = Registry::global()->find("ai.onnx::Scatter");
  ASSERT_NE(op, nullptr);
  EXPECT_EQ(op, Registry::global()->find("ai.onnx::ScatterElements"));
  // The ONNX example: axis 1, data [[1, 2, 3, 4, 5]], indices [[1, 3]], updates [[1.1, 2.1]].
  auto r = runKernel(*Registry::global(), "ai.onnx::Scatter", {{"axis", int64_t{1}}},
                     {fromFloats({1, 5}, {1, 2, 3, 4, 5}), fromInt64s({1, 2}, {1, 3}),
                      fromFloats({1, 2}, {1.1f, 2.1f})},
                     0xff);
  ASSERT_TRUE(r.isOk()) << r.status().message();
  EXPECT_EQ(toDoubles(r->outputs[0]),
            (std::vector<double>{1, static_cast<double>(1.1f), 3, static_cast<double>(2.1f), 5}));
  // Duplicate indices on axis 0 (the default): the last update wins, nothing is summed.
  checkOp(Registry::global(), "ai.onnx::Scatter", {},
          {fromFloats({3, 2}, {0, 0, 0, 0, 0, 0}), fromInt64s({2, 2}, {1, 1, 1, -1}),
           fromFloats({2, 2}, {5, 6, 7, 8})});
  r = runKernel(*Registry::global(), "ai.onnx::Scatter", {},
                {fromFloats({3, 2}, {0, 0, 0, 0, 0, 0}), fromInt64s({2, 2}, {1, 1, 1, -1}),
                 fromFloats({2, 2}, {5, 6, 7, 8})},
                0xff);
  ASSERT_TRUE(r.isOk()) << r.status().message();
  EXPECT_EQ(toDoubles(r->outputs[0]), (std::vector<double>{0, 0, 7, 6, 0, 8}));
}

TEST(Scatter, BadIndicesAreNamed) {
  auto r = runEngine(Registry::global(), "ai.onnx::Scatter", {{"axis", int64_t{1}}},
                     {fromFloats({2, 3}, {1, 2, 3, 4, 5, 6}), fromInt64s({2, 1}, {0, 3}),
                      fromFloats({2, 1}, {9, 9})});
  ASSERT_FALSE(r.isOk());
  expectError(r.status(), {"'indices' holds 3 at position 1", "[-3, 2]", "axis 1 has size 3"});
  NetworkDefinition net(Registry::global());
  auto x = *net.addInput("x", DataType::kFloat32, {2, 3});
  auto idx = *net.addInput("idx", DataType::kFloat32, {2, 3});
  expectError(net.addOp("ai.onnx::Scatter", {x, idx, x}, {}, "sc_node").status(),
              {"sc_node", "'indices' must be INT32 or INT64", "FP32"});
  expectError(net.addOp("ai.onnx::Scatter", {x, *net.addInput("i", DataType::kInt64, {2, 3}), x},
                        {{"axis", int64_t{2}}}, "sc_node")
                  .status(),
              {"sc_node", "axis 2 is out of range"});
}
