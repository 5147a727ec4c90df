// The GELU that PyTorch's ONNX exporter writes for nn.GELU() (opset 17: Div/Erf/Add/Mul/Mul with
// Constant nodes), imported from ONNX, runs as one opforge::FusedGeluChain node with only the
// built-in ops — the seed's MyNet = GELU(GELU(x)) as one layer, no --plugins needed — and the same
// with the op library loaded.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "onnx/onnx_pb.h"
#include "op_harness.h"

using namespace opforge;
using namespace opforge::test;

namespace {
void constant(onnx::GraphProto& g, const std::string& name, float v) {
  auto* n = g.add_node();
  n->set_op_type("Constant");
  n->add_output(name);
  auto* a = n->add_attribute();
  a->set_name("value");
  a->set_type(onnx::AttributeProto::TENSOR);
  auto* t = a->mutable_t();
  t->set_data_type(onnx::TensorProto::FLOAT);
  t->add_float_data(v);
}
void node(onnx::GraphProto& g, const std::string& op, std::vector<std::string> in,
          const std::string& out) {
  auto* n = g.add_node();
  n->set_op_type(op);
  n->set_name(out);
  for (auto& i : in) n->add_input(i);
  n->add_output(out);
}
// One exported nn.GELU(): y = (x * (erf(x / sqrt2) + 1)) * 0.5, prefix p.
void exportedGelu(onnx::GraphProto& g, const std::string& x, const std::string& p) {
  constant(g, p + "c_sqrt2", 1.4142135381698608f);
  constant(g, p + "c_one", 1.0f);
  constant(g, p + "c_half", 0.5f);
  node(g, "Div", {x, p + "c_sqrt2"}, p + "Div");
  node(g, "Erf", {p + "Div"}, p + "Erf");
  node(g, "Add", {p + "Erf", p + "c_one"}, p + "Add");
  node(g, "Mul", {x, p + "Add"}, p + "Mul");
  node(g, "Mul", {p + "Mul", p + "c_half"}, p + "Mul_1");
}

Result<std::shared_ptr<Engine>> buildFrom(const onnx::ModelProto& m, std::shared_ptr<Registry> reg,
                                          bool optimize = true) {
  OPFORGE_ASSIGN_OR_RETURN(auto net, importOnnxBytes(m.SerializeAsString(), "mynet.onnx", "", reg));
  Builder b(reg);
  BuilderConfig cfg;
  cfg.constant_folding = optimize;
  OPFORGE_ASSIGN_OR_RETURN(auto plan, b.buildSerializedNetwork(net, cfg));
  return Engine::loadMemory(std::move(plan), "mynet", reg);
}

std::vector<float> runOn(Engine& e, const std::vector<float>& x) {
  auto ctx = e.createExecutionContext();
  EXPECT_TRUE(ctx.isOk());
  EXPECT_TRUE((*ctx)->setInput("x", x.data(), x.size() * 4).isOk());
  EXPECT_TRUE((*ctx)->execute().isOk());
  auto out = (*ctx)->output("y");
  EXPECT_TRUE(out.isOk());
  const float* p = static_cast<const float*>(out->data);
  return std::vector<float>(p, p + x.size());
}
}  // namespace

TEST(GeluOnnx, ExportedMyNetIsOneFusedNode) {
  onnx::ModelProto m;
  m.set_ir_version(8);
  m.add_opset_import()->set_version(17);
  auto& g = *m.mutable_graph();
  g.set_name("MyNet");
  auto* in = g.add_input();
  in->set_name("x");
  in->mutable_type()->mutable_tensor_type()->set_elem_type(onnx::TensorProto::FLOAT);
  for (int64_t d : {2, 3, 11})
    in->mutable_type()->mutable_tensor_type()->mutable_shape()->add_dim()->set_dim_value(d);
  exportedGelu(g, "x", "/gelu/");
  exportedGelu(g, "/gelu/Mul_1", "/gelu_1/");
  auto* id = g.add_node();
  id->set_op_type("Identity");
  id->add_input("/gelu_1/Mul_1");
  id->add_output("y");
  g.add_output()->set_name("y");

  // Only the built-in registry: one layer.
  auto fused = buildFrom(m, Registry::create());
  ASSERT_TRUE(fused.isOk()) << fused.status().message();
  std::vector<std::string> ops;
  for (const auto& l : (*fused)->layers()) ops.push_back(l.op);
  // The ten GELU nodes are one layer; the graph's trailing Identity stays.
  EXPECT_EQ(ops, (std::vector<std::string>{"opforge::FusedGeluChain v1", "ai.onnx::Identity v1"}));
  // The op library loaded: the same plan.
  auto with_lib = buildFrom(m, contribRegistry());
  ASSERT_TRUE(with_lib.isOk()) << with_lib.status().message();
  std::vector<std::string> lib_ops;
  for (const auto& l : (*with_lib)->layers()) lib_ops.push_back(l.op);
  EXPECT_EQ(lib_ops, ops);
  EXPECT_EQ(std::count(ops.begin(), ops.end(), "ai.onnx::Erf v1"), 0);

  // The optimization passes off: the exported graph as is.
  auto plain = buildFrom(m, Registry::create(), false);
  ASSERT_TRUE(plain.isOk()) << plain.status().message();
  EXPECT_GE((*plain)->layers().size(), 10u);

  std::mt19937_64 rng(61);
  std::uniform_real_distribution<float> u(-5, 5);
  std::vector<float> x(66);
  for (auto& v : x) v = u(rng);
  const auto a = runOn(**fused, x), b = runOn(**plain, x);
  for (size_t i = 0; i < x.size(); ++i) {
    const double g1 = 0.5 * x[i] * std::erfc(-x[i] / std::sqrt(2.0));
    const double want = 0.5 * g1 * std::erfc(-g1 / std::sqrt(2.0));
    EXPECT_NEAR(a[i], want, 1e-6 + 1e-6 * std::fabs(want)) << i;
    EXPECT_NEAR(a[i], b[i], 2e-5 + 2e-5 * std::fabs(want)) << i;
  }
}
