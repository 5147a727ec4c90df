// The shape-value machinery end to end: a PyTorch-style dynamic-batch chain
// (Shape -> Gather -> Unsqueeze -> Concat -> Reshape) builds with a symbolic batch and runs at
// several batch sizes; with static shapes the chain becomes constants (known_values pass) and the
// plan keeps only the Reshape; Constant nodes and arithmetic on them are evaluated at import.
#include <gtest/gtest.h>

#include "onnx/onnx_pb.h"
#include "op_harness.h"

using namespace opforge;
using namespace opforge::test;

namespace {

onnx::NodeProto* node(onnx::GraphProto* g, const std::string& op, std::vector<std::string> in,
                      std::vector<std::string> out) {
  auto* n = g->add_node();
  n->set_op_type(op);
  n->set_name(op + "_" + out[0]);
  for (auto& i : in) n->add_input(i);
  for (auto& o : out) n->add_output(o);
  return n;
}
void intConst(onnx::GraphProto* g, const std::string& name, std::vector<int64_t> v,
              bool scalar = false) {
  auto* n = node(g, "Constant", {}, {name});
  auto* a = n->add_attribute();
  a->set_name("value");
  a->set_type(onnx::AttributeProto::TENSOR);
  auto* t = a->mutable_t();
  t->set_data_type(onnx::TensorProto::INT64);
  if (!scalar) t->add_dims(static_cast<int64_t>(v.size()));
  for (int64_t x : v) t->add_int64_data(x);
}
// y = Reshape(x, [batch, -1]) with batch from Shape(x)[0]; x: [batch, 3, 4] (batch dynamic or 2).
std::string reshapeModel(bool dynamic) {
  onnx::ModelProto m;
  m.set_ir_version(8);
  m.add_opset_import()->set_version(17);
  auto* g = m.mutable_graph();
  g->set_name("g");
  auto* in = g->add_input();
  in->set_name("x");
  auto* tt = in->mutable_type()->mutable_tensor_type();
  tt->set_elem_type(onnx::TensorProto::FLOAT);
  auto* d0 = tt->mutable_shape()->add_dim();
  if (dynamic)
    d0->set_dim_param("batch");
  else
    d0->set_dim_value(2);
  tt->mutable_shape()->add_dim()->set_dim_value(3);
  tt->mutable_shape()->add_dim()->set_dim_value(4);
  node(g, "Shape", {"x"}, {"s"});
  intConst(g, "zero", {0}, true);
  node(g, "Gather", {"s", "zero"}, {"b"});
  intConst(g, "axes", {0});
  node(g, "Unsqueeze", {"b", "axes"}, {"b1"});
  intConst(g, "three", {3});
  intConst(g, "four", {4});
  node(g, "Mul", {"three", "four"}, {"twelve"});  // evaluated at import: both inputs are constants
  node(g, "Concat", {"b1", "twelve"}, {"shape"})->add_attribute()->set_name("axis");
  g->mutable_node(g->node_size() - 1)->mutable_attribute(0)->set_type(onnx::AttributeProto::INT);
  g->mutable_node(g->node_size() - 1)->mutable_attribute(0)->set_i(0);
  node(g, "Reshape", {"x", "shape"}, {"y"});
  g->add_output()->set_name("y");
  std::string bytes;
  m.SerializeToString(&bytes);
  return bytes;
}

}  // namespace

TEST(ShapeValues, DynamicBatchReshapeChainRunsAtSeveralBatchSizes) {
  auto reg = Registry::global();
  auto net = importOnnxBytes(reshapeModel(true), "reshape.onnx", "", reg);
  ASSERT_TRUE(net.isOk()) << net.status().message();
  auto y = net->findTensor("y");
  EXPECT_EQ(net->shapeOf(*y), "[x.0, 12]");
  BuilderConfig cfg;
  cfg.profiles.push_back(OptimizationProfile{}.set("x", {1, 3, 4}, {4, 3, 4}, {8, 3, 4}));
  Builder builder(reg);
  auto plan = builder.buildSerializedNetwork(*net, cfg);
  ASSERT_TRUE(plan.isOk()) << plan.status().message();
  auto engine = *Engine::loadMemory(std::move(*plan), "reshape", reg);
  for (int64_t batch : {1, 5, 8}) {
    auto ctx = engine->createExecutionContext().value();
    ASSERT_TRUE(ctx->setInputShape("x", {batch, 3, 4}).isOk());
    std::vector<float> x(static_cast<size_t>(batch * 12));
    for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(i);
    ASSERT_TRUE(ctx->setInput("x", x.data(), x.size() * 4).isOk());
    ASSERT_TRUE(ctx->execute().isOk());
    Tensor t = *ctx->output("y");
    EXPECT_EQ(t.desc.dims, (std::vector<int64_t>{batch, 12}));
    for (size_t i = 0; i < x.size(); ++i) ASSERT_EQ(t.as<float>()[i], x[i]);
  }
}

TEST(ShapeValues, StaticShapeChainsBecomeConstants) {
  auto reg = Registry::global();
  // The chain after Shape is evaluated when the model is imported (its inputs are known), the
  // Shape itself by the known_values pass: only the Reshape runs, with folding on or off.
  auto net = importOnnxBytes(reshapeModel(false), "reshape.onnx", "", reg);
  ASSERT_TRUE(net.isOk()) << net.status().message();
  std::string log;
  BuilderConfig cfg;
  cfg.log = [&](const std::string& m) { log += m + "\n"; };
  Builder builder(reg);
  auto plan = builder.buildSerializedNetwork(*net, cfg);
  ASSERT_TRUE(plan.isOk()) << plan.status().message();
  auto engine = *Engine::loadMemory(std::move(*plan), "reshape", reg);
  ASSERT_EQ(engine->layers().size(), 1u) << log;
  EXPECT_NE(engine->layers()[0].op.find("Reshape"), std::string::npos);
  EXPECT_NE(log.find("1 known shape values made constant"), std::string::npos) << log;

  // y = Reshape(x, Shape(z)), z static: folding turns the Shape into a constant; without folding
  // the Shape kernel runs; both give the same result.
  onnx::ModelProto m;
  m.set_ir_version(8);
  m.add_opset_import()->set_version(17);
  auto* g = m.mutable_graph();
  for (const char* name : {"x", "z"}) {
    auto* in = g->add_input();
    in->set_name(name);
    auto* tt = in->mutable_type()->mutable_tensor_type();
    tt->set_elem_type(onnx::TensorProto::FLOAT);
    for (int64_t d :
         std::string(name) == "x" ? std::vector<int64_t>{2, 6} : std::vector<int64_t>{3, 4})
      tt->mutable_shape()->add_dim()->set_dim_value(d);
  }
  node(g, "Shape", {"z"}, {"s"});
  node(g, "Reshape", {"x", "s"}, {"y"});
  g->add_output()->set_name("y");
  std::string bytes;
  m.SerializeToString(&bytes);
  auto net2 = importOnnxBytes(bytes, "shape.onnx", "", reg);
  ASSERT_TRUE(net2.isOk()) << net2.status().message();
  for (bool fold : {true, false}) {
    cfg.constant_folding = fold;
    auto p = builder.buildSerializedNetwork(*net2, cfg);
    ASSERT_TRUE(p.isOk()) << p.status().message();
    auto e = *Engine::loadMemory(std::move(*p), "shape", reg);
    EXPECT_EQ(e->layers().size(), fold ? 1u : 2u);
    auto ctx = e->createExecutionContext().value();
    std::vector<float> x(12), z(12, 0.f);
    for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(i);
    ASSERT_TRUE(ctx->setInput("x", x.data(), 48).isOk());
    ASSERT_TRUE(ctx->setInput("z", z.data(), 48).isOk());
    ASSERT_TRUE(ctx->execute().isOk());
    Tensor t = *ctx->output("y");
    EXPECT_EQ(t.desc.dims, (std::vector<int64_t>{3, 4}));
    EXPECT_EQ(t.as<float>()[11], 11.f);
  }
}
