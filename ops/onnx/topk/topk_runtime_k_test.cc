// TopK with a K computed from run-time data (torchvision's detection heads take
// min(1000, boxes above the score threshold)): the axis becomes a data-dependent size, the CPU
// reference reads K, and a K outside [0, axis size] is an error naming the value.
#include <gtest/gtest.h>

#include "onnx_model.h"
#include "opforge/builder.h"
#include "opforge/runtime.h"

using namespace opforge;

TEST(TopK, AKFromRunTimeDataGivesADataDependentAxis) {
  // k = [ReduceSum(Cast(x > 0, INT64))], then TopK(x, k): the k largest are the positive ones.
  test::Model m;
  m.input("x", onnx::TensorProto::FLOAT, {7});
  m.input("extra", onnx::TensorProto::INT64, {1});
  auto* zero = m.g().add_initializer();
  zero->set_name("zero");
  zero->set_data_type(onnx::TensorProto::FLOAT);
  zero->add_float_data(0);
  m.node("Greater", {"x", "zero"}, {"pos"});
  test::intAttr(m.node("Cast", {"pos"}, {"posi"}), "to", onnx::TensorProto::INT64);
  test::intAttr(m.node("ReduceSum", {"posi"}, {"count"}), "keepdims", 1);
  m.node("Add", {"count", "extra"}, {"k"});
  m.node("TopK", {"x", "k"}, {"values", "indices"}, "topk");
  m.output("values", onnx::TensorProto::FLOAT);
  m.output("indices", onnx::TensorProto::INT64);
  auto net = importOnnxBytes(m.m.SerializeAsString(), "topk_k.onnx", "", Registry::global());
  ASSERT_TRUE(net.isOk()) << net.status().message();
  auto plan = Builder().buildSerializedNetwork(*net, {});
  ASSERT_TRUE(plan.isOk()) << plan.status().message();
  auto e = *Engine::loadMemory(*plan, "topk_k");
  auto ctx = std::move(e->createExecutionContext()).value();
  const std::vector<float> x = {0.5f, -1, 3, -2, 2, 0, -4};
  ASSERT_TRUE(ctx->setInput("x", x.data(), x.size() * 4).isOk());
  auto run = [&](int64_t extra) {
    EXPECT_TRUE(ctx->setInput("extra", &extra, 8).isOk());
    return ctx->execute();
  };
  ASSERT_TRUE(run(0).isOk());
  Tensor v = *ctx->output("values"), i = *ctx->output("indices");
  ASSERT_EQ(v.desc.dims, std::vector<int64_t>{3});
  EXPECT_EQ(std::vector<float>(v.as<float>(), v.as<float>() + 3), (std::vector<float>{3, 2, 0.5f}));
  EXPECT_EQ(std::vector<int64_t>(i.as<int64_t>(), i.as<int64_t>() + 3),
            (std::vector<int64_t>{2, 4, 0}));
  ASSERT_TRUE(run(-3).isOk());
  EXPECT_EQ(ctx->output("values")->desc.dims, std::vector<int64_t>{0});
  ASSERT_TRUE(run(4).isOk());
  EXPECT_EQ(ctx->output("indices")->desc.dims, std::vector<int64_t>{7});
  for (int64_t bad : {5, -4}) {
    Status st = run(bad);
    ASSERT_FALSE(st.isOk());
    EXPECT_NE(st.message().find("node 'topk'"), std::string::npos) << st.message();
    EXPECT_NE(st.message().find("K = " + std::to_string(3 + bad) + " is outside [0, 7]"),
              std::string::npos)
        << st.message();
  }
  ASSERT_TRUE(run(1).isOk());  // the context stays usable
  EXPECT_EQ(ctx->output("values")->desc.dims, std::vector<int64_t>{4});
}
