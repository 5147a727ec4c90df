// ONNX import: TensorRT's plugin mapping, initializers, external data rules, errors.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>

#include "onnx/onnx_pb.h"
#include "op_harness.h"

using namespace opforge;

namespace {
struct Model {
  onnx::ModelProto m;
  Model() {
    m.set_ir_version(8);
    auto* o = m.add_opset_import();
    o->set_domain("");
    o->set_version(17);
    m.mutable_graph()->set_name("g");
  }
  onnx::GraphProto& g() { return *m.mutable_graph(); }
  void input(const std::string& name, int type, std::vector<int64_t> dims) {
    auto* v = g().add_input();
    v->set_name(name);
    auto* t = v->mutable_type()->mutable_tensor_type();
    t->set_elem_type(type);
    auto* s = t->mutable_shape();
    for (int64_t d : dims) {
      auto* dim = s->add_dim();
      if (d < 0)
        dim->set_dim_param("N");
      else
        dim->set_dim_value(d);
    }
  }
  void output(const std::string& name, int type = 0) {
    auto* v = g().add_output();
    v->set_name(name);
    v->mutable_type()->mutable_tensor_type()->set_elem_type(type);
  }
  onnx::NodeProto* node(const std::string& op, std::vector<std::string> in,
                        std::vector<std::string> out, const std::string& name = "",
                        const std::string& domain = "") {
    auto* n = g().add_node();
    n->set_op_type(op);
    n->set_name(name);
    n->set_domain(domain);
    for (auto& i : in) n->add_input(i);
    for (auto& o : out) n->add_output(o);
    return n;
  }
  std::string save(const std::string& file) {
    std::string dir = test::testDir() + "/onnx_import";
    ::mkdir(dir.c_str(), 0755);
    std::string path = dir + "/" + file;
    std::ofstream f(path, std::ios::binary);
    f << m.SerializeAsString();
    return path;
  }
};
void strAttr(onnx::NodeProto* n, const std::string& k, const std::string& v) {
  auto* a = n->add_attribute();
  a->set_name(k);
  a->set_type(onnx::AttributeProto::STRING);
  a->set_s(v);
}
void intsAttr(onnx::NodeProto* n, const std::string& k, std::vector<int64_t> v) {
  auto* a = n->add_attribute();
  a->set_name(k);
  a->set_type(onnx::AttributeProto::INTS);
  for (auto x : v) a->add_ints(x);
}
void intAttr(onnx::NodeProto* n, const std::string& k, int64_t v) {
  auto* a = n->add_attribute();
  a->set_name(k);
  a->set_type(onnx::AttributeProto::INT);
  a->set_i(v);
}
Model padModel() {
  Model m;
  m.input("x", onnx::TensorProto::FLOAT, {2, 4});
  auto* n = m.node("circ_pad_plugin", {"x"}, {"y"}, "pad");
  intsAttr(n, "pads", {1, 1});
  strAttr(n, "plugin_namespace", "example");
  m.output("y", onnx::TensorProto::FLOAT);
  return m;
}
}  // namespace

TEST(OnnxImport, PluginNamespaceAttribute) {
  auto net = importOnnx(padModel().save("pad.onnx"), test::contribRegistry());
  ASSERT_TRUE(net.isOk()) << net.status().message();
  EXPECT_EQ(net->shapeOf(*net->findTensor("y")), "[2, 6]");
}

TEST(OnnxImport, DomainIsTheNamespaceWithoutTheAttribute) {
  Model m;
  m.input("x", onnx::TensorProto::FLOAT, {2, 4});
  auto* n = m.node("circ_pad_plugin", {"x"}, {"y"}, "pad", "example");
  intsAttr(n, "pads", {1, 1});
  m.output("y");
  EXPECT_TRUE(importOnnx(m.save("domain.onnx"), test::contribRegistry()).isOk());
}

TEST(OnnxImport, PluginVersionAttribute) {
  auto m = padModel();
  strAttr(m.g().mutable_node(0), "plugin_version", "2");
  auto r = importOnnx(m.save("v2.onnx"), test::contribRegistry());
  ASSERT_FALSE(r.isOk());
  EXPECT_NE(r.status().message().find("version '2'"), std::string::npos) << r.status().message();
}

TEST(OnnxImport, UnknownOpsAreListedTogether) {
  Model m;
  m.input("x", onnx::TensorProto::FLOAT, {2, 4});
  auto* a = m.node("circ_pad_plugin", {"x"}, {"a"}, "pad");
  intsAttr(a, "pads", {1, 1});
  strAttr(a, "plugin_namespace", "example");
  auto* b = m.node("MysteryOp", {"a"}, {"b"}, "mystery", "acme");
  strAttr(b, "plugin_version", "3");
  m.node("NotAnOnnxOp", {"b"}, {"y"}, "weird");
  m.output("y");
  auto r = importOnnx(m.save("unknown.onnx"), Registry::create());
  ASSERT_FALSE(r.isOk());
  const std::string msg = r.status().message();
  for (const char* part :
       {"3 node(s)", "op 'circ_pad_plugin', namespace 'example', version '1'",
        "op 'MysteryOp', namespace 'acme', version '3'", "op 'NotAnOnnxOp', namespace ''",
        "loaded libraries: <built-in>", "--plugins=", "unknown.onnx"})
    EXPECT_NE(msg.find(part), std::string::npos) << "missing '" << part << "' in:\n" << msg;
}

TEST(OnnxImport, NotOnnxOrTruncated) {
  std::string path = test::testDir() + "/garbage.onnx";
  std::ofstream(path) << "definitely not a protobuf \xff\xff\xff";
  auto r = importOnnx(path, test::contribRegistry());
  ASSERT_FALSE(r.isOk());
  EXPECT_NE(r.status().message().find("not a valid ONNX model"), std::string::npos)
      << r.status().message();
  EXPECT_NE(r.status().message().find("garbage.onnx"), std::string::npos);

  std::string good = padModel().m.SerializeAsString();
  std::string tpath = test::testDir() + "/truncated.onnx";
  std::ofstream(tpath, std::ios::binary) << good.substr(0, good.size() / 2);
  auto t = importOnnx(tpath, test::contribRegistry());
  EXPECT_FALSE(t.isOk());
  auto empty = importOnnxBytes("", "empty.onnx", "", test::contribRegistry());
  EXPECT_NE(empty.status().message().find("empty"), std::string::npos);
  EXPECT_EQ(importOnnx("/nonexistent.onnx").status().code(), StatusCode::kNotFound);
}

TEST(OnnxImport, WrongAttributeTypeNamesFileNodeAndAttribute) {
  Model m;
  m.input("x", onnx::TensorProto::FLOAT, {2, 4});
  auto* n = m.node("circ_pad_plugin", {"x"}, {"y"}, "pad");
  strAttr(n, "plugin_namespace", "example");
  strAttr(n, "pads", "1,1");
  m.output("y");
  auto r = importOnnx(m.save("badattr.onnx"), test::contribRegistry());
  ASSERT_FALSE(r.isOk());
  for (const char* part : {"badattr.onnx", "node 'pad'", "attribute 'pads'", "int32[]"})
    EXPECT_NE(r.status().message().find(part), std::string::npos) << r.status().message();
}

TEST(OnnxImport, StandardOpsInitializersAndConstants) {
  // y = Cast(Identity(x) * W + Constant(1.5)) to FP16; W an initializer.
  Model m;
  m.input("x", onnx::TensorProto::FLOAT, {-1, 3});
  auto* w = m.g().add_initializer();
  w->set_name("W");
  w->set_data_type(onnx::TensorProto::FLOAT);
  w->add_dims(3);
  for (float f : {1.f, 2.f, 3.f}) w->add_float_data(f);
  m.node("Identity", {"x"}, {"xi"});
  m.node("Mul", {"xi", "W"}, {"xw"});
  auto* c = m.node("Constant", {}, {"c"});
  auto* a = c->add_attribute();
  a->set_name("value_float");
  a->set_type(onnx::AttributeProto::FLOAT);
  a->set_f(1.5f);
  m.node("Add", {"xw", "c"}, {"s"});
  auto* cast = m.node("Cast", {"s"}, {"y"});
  intAttr(cast, "to", onnx::TensorProto::FLOAT16);
  m.output("y", onnx::TensorProto::FLOAT16);
  auto net = importOnnx(m.save("std.onnx"), test::contribRegistry());
  ASSERT_TRUE(net.isOk()) << net.status().message();
  BuilderConfig cfg;
  cfg.profiles.push_back(OptimizationProfile{}.set("x", {1, 3}, {2, 3}, {4, 3}));
  Builder b(test::contribRegistry());
  auto plan = b.buildSerializedNetwork(*net, cfg);
  ASSERT_TRUE(plan.isOk()) << plan.status().message();
  auto e = *Engine::loadMemory(*plan, "std", test::contribRegistry());
  for (const auto& l : e->layers())
    EXPECT_NE(l.op, "ai.onnx::Constant v1") << "the Constant was not folded";
  auto ctx = std::move(e->createExecutionContext()).value();
  ASSERT_TRUE(ctx->setInputShape("x", {2, 3}).isOk());
  std::vector<float> in = {1, 2, 3, -1, 0, 0.5f};
  ASSERT_TRUE(ctx->setInput("x", in.data(), 24).isOk());
  ASSERT_TRUE(ctx->execute().isOk());
  Tensor y = *ctx->output("y");
  ASSERT_EQ(y.desc.dtype, DataType::kFloat16);
  const float want[] = {2.5f, 5.5f, 10.5f, 0.5f, 1.5f, 3.f};
  for (int i = 0; i < 6; ++i) EXPECT_EQ(halfToFloat(y.as<uint16_t>()[i]), want[i]);
}

namespace {
void int64Init(Model& m, const std::string& name, std::vector<int64_t> dims,
               std::vector<int64_t> vals) {
  auto* t = m.g().add_initializer();
  t->set_name(name);
  t->set_data_type(onnx::TensorProto::INT64);
  for (int64_t d : dims) t->add_dims(d);
  for (int64_t v : vals) t->add_int64_data(v);
}
}  // namespace

// The TorchScript exporter's `tensor.expand(batch, -1, -1)` (torchvision ViT's class token,
// transformers' position ids): the target shape [b, -1, -1] is compared with -1 and the -1s
// replaced by 1 through Equal / Where. A dimension is never -1, so the shape is [b, 1, 1] for
// every batch and the plan builds with a dynamic batch.
TEST(OnnxImport, TorchScriptExpandChainOnInputShapes) {
  Model m;
  m.input("x", onnx::TensorProto::FLOAT, {-1, 3});
  auto* tok = m.g().add_initializer();
  tok->set_name("tok");
  tok->set_data_type(onnx::TensorProto::FLOAT);
  for (int64_t d : {1, 1, 3}) tok->add_dims(d);
  for (float f : {1.f, 2.f, 3.f}) tok->add_float_data(f);
  int64Init(m, "zero", {}, {0});
  int64Init(m, "axes0", {1}, {0});
  int64Init(m, "minus1", {1}, {-1});
  int64Init(m, "minus1s", {}, {-1});
  m.node("Shape", {"x"}, {"s"});
  intAttr(m.node("Gather", {"s", "zero"}, {"b"}), "axis", 0);
  m.node("Unsqueeze", {"b", "axes0"}, {"b1"});
  intAttr(m.node("Concat", {"b1", "minus1", "minus1"}, {"c"}), "axis", 0);
  m.node("Reshape", {"c", "minus1"}, {"r"});
  m.node("Shape", {"r"}, {"rs"});
  auto* cos = m.node("ConstantOfShape", {"rs"}, {"ones"});
  auto* a = cos->add_attribute();
  a->set_name("value");
  a->set_type(onnx::AttributeProto::TENSOR);
  a->mutable_t()->set_data_type(onnx::TensorProto::INT64);
  a->mutable_t()->add_dims(1);
  a->mutable_t()->add_int64_data(1);
  m.node("Mul", {"ones", "minus1s"}, {"neg"});
  m.node("Equal", {"r", "neg"}, {"eq"});
  m.node("Where", {"eq", "ones", "r"}, {"shape"});
  m.node("Expand", {"tok", "shape"}, {"e"});
  m.node("Add", {"e", "x"}, {"y"});  // [b,1,3] + [b,3] -> [b,b,3]
  m.output("y", onnx::TensorProto::FLOAT);
  auto net = importOnnx(m.save("expand_chain.onnx"), test::contribRegistry());
  ASSERT_TRUE(net.isOk()) << net.status().message();
  EXPECT_EQ(net->shapeOf(*net->findTensor("e")), "[x.0, 1, 3]");
  BuilderConfig cfg;
  cfg.profiles.push_back(OptimizationProfile{}.set("x", {1, 3}, {2, 3}, {8, 3}));
  Builder b(test::contribRegistry());
  auto plan = b.buildSerializedNetwork(*net, cfg);
  ASSERT_TRUE(plan.isOk()) << plan.status().message();
  auto e = *Engine::loadMemory(*plan, "expand_chain", test::contribRegistry());
  auto ctx = std::move(e->createExecutionContext()).value();
  ASSERT_TRUE(ctx->setInputShape("x", {3, 3}).isOk());
  std::vector<float> in = {0, 0, 0, 10, 10, 10, 20, 20, 20};
  ASSERT_TRUE(ctx->setInput("x", in.data(), in.size() * 4).isOk());
  ASSERT_TRUE(ctx->execute().isOk());
  Tensor y = *ctx->output("y");
  ASSERT_EQ(y.desc.dims, (std::vector<int64_t>{3, 3, 3}));
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j)
      for (int k = 0; k < 3; ++k)
        EXPECT_EQ(y.as<float>()[(i * 3 + j) * 3 + k], static_cast<float>(k + 1 + 10 * j));
}

TEST(OnnxImport, ExternalDataFollowsOnnxRules) {
  std::string dir = test::testDir() + "/ext";
  ::mkdir(dir.c_str(), 0755);
  float data[3] = {4.f, 5.f, 6.f};
  {
    std::ofstream f(dir + "/weights.bin", std::ios::binary);
    f.write("PAD!", 4);
    f.write(reinterpret_cast<const char*>(data), 12);
  }
  auto makeModel = [&](const std::string& location) {
    Model m;
    m.input("x", onnx::TensorProto::FLOAT, {3});
    auto* w = m.g().add_initializer();
    w->set_name("W");
    w->set_data_type(onnx::TensorProto::FLOAT);
    w->add_dims(3);
    w->set_data_location(onnx::TensorProto::EXTERNAL);
    auto* kv = w->add_external_data();
    kv->set_key("location");
    kv->set_value(location);
    kv = w->add_external_data();
    kv->set_key("offset");
    kv->set_value("4");
    kv = w->add_external_data();
    kv->set_key("length");
    kv->set_value("12");
    m.node("Add", {"x", "W"}, {"y"});
    m.output("y");
    std::string path = dir + "/model.onnx";
    std::ofstream(path, std::ios::binary) << m.m.SerializeAsString();
    return path;
  };
  auto ok = importOnnx(makeModel("weights.bin"), test::contribRegistry());
  ASSERT_TRUE(ok.isOk()) << ok.status().message();
  ASSERT_EQ(::symlink((dir + "/weights.bin").c_str(), (dir + "/link.bin").c_str()), 0);
  for (auto [loc, why] :
       std::vector<std::pair<std::string, std::string>>{{"/etc/passwd", "absolute"},
                                                        {"../ext/weights.bin", "'..'"},
                                                        {"link.bin", "symbolic link"},
                                                        {"missing.bin", "does not exist"}}) {
    auto r = importOnnx(makeModel(loc), test::contribRegistry());
    ASSERT_FALSE(r.isOk()) << loc;
    EXPECT_NE(r.status().message().find(why), std::string::npos) << r.status().message();
    EXPECT_NE(r.status().message().find("initializer 'W'"), std::string::npos)
        << r.status().message();
  }
}

TEST(OnnxImport, GraphStructureErrors) {
  Model m;
  m.input("x", onnx::TensorProto::FLOAT, {3});
  m.node("Add", {"x", "ghost"}, {"y"}, "adder");
  m.output("y");
  auto r = importOnnx(m.save("ghost.onnx"), test::contribRegistry());
  ASSERT_FALSE(r.isOk());
  EXPECT_NE(r.status().message().find("reads tensor 'ghost'"), std::string::npos)
      << r.status().message();
  Model c;
  c.input("x", onnx::TensorProto::FLOAT, {3});
  c.node("Add", {"x", "b"}, {"a"}, "n1");
  c.node("Add", {"x", "a"}, {"b"}, "n2");
  c.output("b");
  auto cyc = importOnnx(c.save("cycle.onnx"), test::contribRegistry());
  ASSERT_FALSE(cyc.isOk());
  EXPECT_NE(cyc.status().message().find("cycle"), std::string::npos) << cyc.status().message();
  Model t;  // nodes out of order are sorted
  t.input("x", onnx::TensorProto::FLOAT, {3});
  t.node("Add", {"a", "a"}, {"y"}, "second");
  t.node("Identity", {"x"}, {"a"}, "first");
  t.output("y");
  EXPECT_TRUE(importOnnx(t.save("unsorted.onnx"), test::contribRegistry()).isOk());
}
