// The names public exporters give deformable aggregation import as opforge::DeformableAggregation
// (ONNX node domain = namespace, as TensorRT's parser maps plugins), with the tables as
// initializers.
#include <gtest/gtest.h>

#include <cstring>

#include "da_problem.h"
#include "onnx/onnx_pb.h"
#include "op_harness.h"

using namespace opforge;
using namespace opforge::test;

namespace {
void addTensor(onnx::GraphProto& g, const std::string& name, const TensorValue& t,
               bool initializer) {
  const int type =
      t.desc.dtype == DataType::kInt32 ? onnx::TensorProto::INT32 : onnx::TensorProto::FLOAT;
  if (initializer) {
    auto* init = g.add_initializer();
    init->set_name(name);
    init->set_data_type(type);
    for (int64_t d : t.desc.dims) init->add_dims(d);
    init->set_raw_data(std::string(t.data.begin(), t.data.end()));
    return;
  }
  auto* v = g.add_input();
  v->set_name(name);
  auto* tt = v->mutable_type()->mutable_tensor_type();
  tt->set_elem_type(type);
  for (int64_t d : t.desc.dims) tt->mutable_shape()->add_dim()->set_dim_value(d);
}
}  // namespace

TEST(DeformableAggregationOnnx, ExporterNamesImportAsTheOp) {
  DaProblem p;
  std::mt19937_64 rng(51);
  const auto in = makeDaInputs(p, rng);
  auto want = runKernel(*contribRegistry(), "opforge::DeformableAggregation", {}, in, 0xff);
  ASSERT_TRUE(want.isOk());
  const std::vector<std::pair<std::string, std::string>> names = {
      {"custom", "DeformableAttentionAggrPlugin"},
      {"nv", "MSDA"},
      {"SparseDrive", "DeformableAggregation"}};
  const char* inputs[] = {"feat", "spatial_shape", "scale_start_index", "loc", "weights"};
  for (const auto& [domain, op] : names) {
    onnx::ModelProto m;
    m.set_ir_version(8);
    m.add_opset_import()->set_version(17);
    auto* dom = m.add_opset_import();
    dom->set_domain(domain);
    dom->set_version(1);
    auto& g = *m.mutable_graph();
    g.set_name("da");
    for (int i = 0; i < 5; ++i) addTensor(g, inputs[i], in[i], i == 1 || i == 2);
    auto* n = g.add_node();
    n->set_op_type(op);
    n->set_domain(domain);
    n->set_name("agg");
    for (const char* i : inputs) n->add_input(i);
    n->add_output("out");
    g.add_output()->set_name("out");
    auto net =
        importOnnxBytes(m.SerializeAsString(), domain + "_" + op + ".onnx", "", contribRegistry());
    ASSERT_TRUE(net.isOk()) << net.status().message();
    Builder b(contribRegistry());
    auto plan = b.buildSerializedNetwork(*net, BuilderConfig{});
    ASSERT_TRUE(plan.isOk()) << plan.status().message();
    auto engine = Engine::loadMemory(std::move(*plan), "da", contribRegistry());
    ASSERT_TRUE(engine.isOk()) << engine.status().message();
    ASSERT_EQ((*engine)->layers().size(), 1u);
    EXPECT_EQ((*engine)->layers()[0].op, "opforge::DeformableAggregation v1")
        << domain << "::" << op;
    auto ctx = (*engine)->createExecutionContext();
    ASSERT_TRUE(ctx.isOk());
    for (int i : {0, 3, 4})
      ASSERT_TRUE((*ctx)->setInput(inputs[i], in[i].data.data(), in[i].data.size()).isOk());
    ASSERT_TRUE((*ctx)->execute().isOk());
    auto out = (*ctx)->output("out");
    ASSERT_TRUE(out.isOk());
    ASSERT_EQ(out->bytes(), want->outputs[0].data.size());
    EXPECT_EQ(std::memcmp(out->data, want->outputs[0].data.data(), out->bytes()), 0)
        << domain << "::" << op;
  }
}
