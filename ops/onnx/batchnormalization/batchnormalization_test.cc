// ai.onnx::BatchNormalization on the CPU: training_mode = 1 (batch statistics and the running
// outputs) against hand-computed values, and bad attribute values named.
#include <gtest/gtest.h>

#include <cmath>

#include "op_harness.h"

using namespace opforge;
using namespace opforge::test;

TEST(BatchNormalization, TrainingModeUsesBatchStatistics) {
  // Channel 0: values 1, 3 (image 0) and 5, 7 (image 1): mean 4, variance 5. Channel 1: 2, 2, 2,
  // 2: mean 2, variance 0.
  TensorValue x = fromFloats({2, 2, 2}, {1, 3, 2, 2, 5, 7, 2, 2});
  TensorValue scale = fromFloats({2}, {2, 1}), bias = fromFloats({2}, {1, -1});
  TensorValue mean = fromFloats({2}, {0, 10}), var = fromFloats({2}, {1, 3});
  Attrs a{{"training_mode", int64_t{1}}, {"epsilon", 0.0}, {"momentum", 0.75}};
  auto r =
      runEngine(Registry::global(), "ai.onnx::BatchNormalization", a, {x, scale, bias, mean, var});
  ASSERT_TRUE(r.isOk()) << r.status().message();
  ASSERT_EQ(r->outputs.size(), 3u);
  const float s5 = 2 / std::sqrt(5.f);
  // Channel 1 has variance 0 and epsilon 0: (x - mean) / 0 = 0 / 0.
  std::vector<double> y = toDoubles(r->outputs[0]);
  EXPECT_NEAR(y[0], 1 + (1 - 4) * s5, 1e-5);
  EXPECT_NEAR(y[1], 1 + (3 - 4) * s5, 1e-5);
  EXPECT_NEAR(y[4], 1 + (5 - 4) * s5, 1e-5);
  EXPECT_NEAR(y[5], 1 + (7 - 4) * s5, 1e-5);
  EXPECT_TRUE(
      allClose(r->outputs[1], fromFloats({2}, {0.75f * 0 + 0.25f * 4, 0.75f * 10 + 0.25f * 2})));
  EXPECT_TRUE(allClose(r->outputs[2], fromFloats({2}, {0.75f * 1 + 0.25f * 5, 0.75f * 3 + 0})));
}

TEST(BatchNormalization, BadTrainingModeIsNamed) {
  NetworkDefinition net(Registry::global());
  auto x = *net.addInput("x", DataType::kFloat32, {2, 3, 4});
  std::vector<TensorRef> in{x};
  for (int i = 0; i < 4; ++i)
    in.push_back(*net.addInput("p" + std::to_string(i), DataType::kFloat32, {3}));
  Status st =
      net.addOp("ai.onnx::BatchNormalization", in, {{"training_mode", int64_t{2}}}, "bn_node")
          .status();
  ASSERT_FALSE(st.isOk());
  for (const char* p : {"bn_node", "BatchNormalization", "training_mode", "2"})
    EXPECT_NE(st.message().find(p), std::string::npos) << p << " missing in: " << st.message();
}
