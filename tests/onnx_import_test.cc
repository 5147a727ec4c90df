// ONNX import: TensorRT's plugin mapping, initializers, external data rules, errors.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
#include <limits>

#include "onnx/onnx_pb.h"
#include "onnx_model.h"
#include "op_harness.h"

using namespace opforge;

using test::intAttr;
using test::intsAttr;
using test::Model;
using test::strAttr;

namespace {
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
void int64Initializer(Model& m, const std::string& name, std::vector<int64_t> dims,
                      std::vector<int64_t> values) {
  auto* t = m.g().add_initializer();
  t->set_name(name);
  t->set_data_type(onnx::TensorProto::INT64);
  for (int64_t d : dims) t->add_dims(d);
  for (int64_t v : values) t->add_int64_data(v);
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
  int64Initializer(m, "zero", {}, {0});
  int64Initializer(m, "axes0", {1}, {0});
  int64Initializer(m, "minus1", {1}, {-1});
  int64Initializer(m, "minus1s", {}, {-1});
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

// ---- Hostile models (issue 21): limits instead of aborts, iterative sort, strict fields. ----

namespace {
std::string uniq(const std::string& name) {
  return std::to_string(::getpid()) + "_" + name;
}
Result<NetworkDefinition> importModel(const Model& m, const std::string& name) {
  return importOnnxBytes(m.m.SerializeAsString(), name, "", test::contribRegistry());
}
// A chain of n Relu nodes x -> t1 -> ... -> y, listed in reverse order.
Model reluChain(int n) {
  Model m;
  m.input("x", onnx::TensorProto::FLOAT, {4});
  for (int i = n - 1; i >= 0; --i)
    m.node("Relu", {i == 0 ? "x" : "t" + std::to_string(i)},
           {i == n - 1 ? "y" : "t" + std::to_string(i + 1)});
  m.output("y");
  return m;
}
}  // namespace

TEST(OnnxImport, DeepChainsInReverseOrderImportWithoutRecursion) {
  auto big = importModel(reluChain(200000), "chain200k.onnx");
  ASSERT_TRUE(big.isOk()) << big.status().message();
  EXPECT_EQ(big->numNodes(), 200000);
  auto net = importModel(reluChain(20000), "chain20k.onnx");
  ASSERT_TRUE(net.isOk()) << net.status().message();
  Builder b(test::contribRegistry());
  auto plan = b.buildSerializedNetwork(*net, {});
  ASSERT_TRUE(plan.isOk()) << plan.status().message();
  auto e = Engine::loadMemory(*plan, "chain20k", test::contribRegistry());
  ASSERT_TRUE(e.isOk()) << e.status().message();
  auto ctx = std::move((*e)->createExecutionContext()).value();
  std::vector<float> in = {-1, 2, -3, 4};
  ASSERT_TRUE(ctx->setInput("x", in.data(), 16).isOk());
  ASSERT_TRUE(ctx->execute().isOk());
  Tensor y = *ctx->output("y");
  EXPECT_EQ(y.as<float>()[0], 0.f);
  EXPECT_EQ(y.as<float>()[1], 2.f);
  EXPECT_EQ(y.as<float>()[3], 4.f);
}

TEST(OnnxImport, HugeDimensionsAreErrorsNamingTheTensor) {
  {  // an initializer of dims [2^31] and no data
    Model m;
    m.input("x", onnx::TensorProto::FLOAT, {3});
    auto* w = m.g().add_initializer();
    w->set_name("W");
    w->set_data_type(onnx::TensorProto::FLOAT);
    w->add_dims(int64_t{1} << 31);
    m.node("Add", {"x", "W"}, {"y"});
    m.output("y");
    auto r = importModel(m, "init31.onnx");
    ASSERT_FALSE(r.isOk());
    EXPECT_NE(r.status().message().find("initializer 'W'"), std::string::npos)
        << r.status().message();
    EXPECT_NE(r.status().message().find("2147483648"), std::string::npos) << r.status().message();
  }
  {  // dims changed, raw data left as is: compared before anything is allocated
    Model m;
    m.input("x", onnx::TensorProto::FLOAT, {3});
    auto* w = m.g().add_initializer();
    w->set_name("W");
    w->set_data_type(onnx::TensorProto::FLOAT);
    for (int k = 0; k < 2; ++k) w->add_dims(int64_t{1} << 30);
    w->set_raw_data(std::string(12, '\0'));
    m.node("Add", {"x", "W"}, {"y"});
    m.output("y");
    auto r = importModel(m, "init60.onnx");
    ASSERT_FALSE(r.isOk());
    EXPECT_NE(r.status().message().find("initializer 'W'"), std::string::npos)
        << r.status().message();
    EXPECT_NE(r.status().message().find("2^40"), std::string::npos) << r.status().message();
    w->clear_dims();
    w->add_dims(int64_t{1} << 20);
    w->add_dims(int64_t{1} << 10);
    auto raw = importModel(m, "init30.onnx");
    ASSERT_FALSE(raw.isOk());
    EXPECT_NE(raw.status().message().find("raw_data holds 12 bytes"), std::string::npos)
        << raw.status().message();
  }
  {  // a graph input
    Model m;
    m.input("x", onnx::TensorProto::FLOAT, {int64_t{1} << 31, 3});
    m.node("Relu", {"x"}, {"y"});
    m.output("y");
    auto r = importModel(m, "input31.onnx");
    ASSERT_FALSE(r.isOk());
    EXPECT_NE(r.status().message().find("input 'x'"), std::string::npos) << r.status().message();
    EXPECT_NE(r.status().message().find("2147483648"), std::string::npos) << r.status().message();
  }
  {  // a Constant node of dims [2^40] and no data
    Model m;
    auto* c = m.node("Constant", {}, {"y"}, "big");
    auto* a = c->add_attribute();
    a->set_name("value");
    a->set_type(onnx::AttributeProto::TENSOR);
    a->mutable_t()->set_data_type(onnx::TensorProto::FLOAT);
    a->mutable_t()->add_dims(int64_t{1} << 40);
    m.output("y");
    auto r = importModel(m, "const40.onnx");
    ASSERT_FALSE(r.isOk());
    EXPECT_NE(r.status().message().find("node 'big'"), std::string::npos) << r.status().message();
    EXPECT_NE(r.status().message().find("1099511627776"), std::string::npos)
        << r.status().message();
  }
}

TEST(OnnxImport, HugeConstantOfShapeAndRangeAreNotMaterialized) {
  // ConstantOfShape([2^40]) and Range(0, 2^40, 1): imported and built without allocating them
  // (4 and 8 TiB); running them is an allocation error, not an abort.
  for (const char* op : {"ConstantOfShape", "Range"}) {
    Model m;
    if (std::string(op) == "ConstantOfShape") {
      int64Initializer(m, "shape", {1}, {int64_t{1} << 40});
      m.node("ConstantOfShape", {"shape"}, {"y"}, "fill");
    } else {
      int64Initializer(m, "start", {}, {0});
      int64Initializer(m, "limit", {}, {int64_t{1} << 40});
      int64Initializer(m, "delta", {}, {1});
      m.node("Range", {"start", "limit", "delta"}, {"y"}, "fill");
    }
    m.output("y");
    auto net = importModel(m, uniq(op) + ".onnx");
    ASSERT_TRUE(net.isOk()) << op << ": " << net.status().message();
    Builder b(test::contribRegistry());
    auto plan = b.buildSerializedNetwork(*net, {});
    ASSERT_TRUE(plan.isOk()) << op << ": " << plan.status().message();
    auto e = Engine::loadMemory(*plan, op, test::contribRegistry());
    ASSERT_TRUE(e.isOk()) << e.status().message();
    auto ctx = (*e)->createExecutionContext();
    Status st = ctx ? (*ctx)->execute() : ctx.status();
    EXPECT_FALSE(st.isOk()) << op;
    EXPECT_NE(st.message().find("allocate"), std::string::npos) << op << ": " << st.message();
  }
  // Beyond the documented maximum of 2^40 elements: an error at build naming the node.
  Model m;
  int64Initializer(m, "shape", {2}, {int64_t{1} << 30, int64_t{1} << 20});
  m.node("ConstantOfShape", {"shape"}, {"y"}, "fill");
  m.output("y");
  auto net = importModel(m, "cos50.onnx");
  Status st = net.isOk()
                  ? Builder(test::contribRegistry()).buildSerializedNetwork(*net, {}).status()
                  : net.status();
  ASSERT_FALSE(st.isOk());
  EXPECT_NE(st.message().find("'fill'"), std::string::npos) << st.message();
  EXPECT_NE(st.message().find("2^40"), std::string::npos) << st.message();
}

TEST(OnnxImport, Int64DivisionTrapsAreNotFolded) {
  for (const char* op : {"Div", "Mod"}) {
    Model m;
    m.input("x", onnx::TensorProto::INT64, {1});
    int64Initializer(m, "a", {1}, {std::numeric_limits<int64_t>::min()});
    int64Initializer(m, "b", {1}, {-1});
    m.node(op, {"a", "b"}, {"q"}, "q");
    m.node("Add", {"q", "x"}, {"y"}, "add");
    m.output("y");
    auto net = importModel(m, uniq(op) + "_min.onnx");  // folding it used to SIGFPE
    ASSERT_TRUE(net.isOk()) << net.status().message();
    auto plan = Builder(test::contribRegistry()).buildSerializedNetwork(*net, {});
    ASSERT_TRUE(plan.isOk()) << plan.status().message();
    auto e = *Engine::loadMemory(*plan, op, test::contribRegistry());
    auto ctx = std::move(e->createExecutionContext()).value();
    const int64_t zero = 0;
    ASSERT_TRUE(ctx->setInput("x", &zero, 8).isOk());
    ASSERT_TRUE(ctx->execute().isOk());
    const int64_t want = std::string(op) == "Div" ? std::numeric_limits<int64_t>::min() : 0;
    EXPECT_EQ(ctx->output("y")->as<int64_t>()[0], want) << op;  // ONNX Runtime wraps too
  }
}

TEST(OnnxImport, ShapeArithmeticThatDoesNotFitIsAnError) {
  {  // Pad with pads INT64_MAX used to wrap to a dimension of 2
    Model m;
    m.input("x", onnx::TensorProto::FLOAT, {4});
    int64Initializer(m, "pads", {2},
                     {std::numeric_limits<int64_t>::max(), std::numeric_limits<int64_t>::max()});
    m.node("Pad", {"x", "pads"}, {"y"}, "pad");
    m.output("y");
    auto r = importModel(m, "padmax.onnx");
    ASSERT_FALSE(r.isOk());
    EXPECT_NE(r.status().message().find("node 'pad'"), std::string::npos) << r.status().message();
    EXPECT_NE(r.status().message().find("overflow"), std::string::npos) << r.status().message();
  }
  {  // reflect pads beyond size - 1 (ONNX Runtime refuses them)
    Model m;
    m.input("x", onnx::TensorProto::FLOAT, {4});
    int64Initializer(m, "pads", {2}, {5, 0});
    auto* n = m.node("Pad", {"x", "pads"}, {"y"}, "pad");
    strAttr(n, "mode", "reflect");
    m.output("y");
    auto r = importModel(m, "padreflect.onnx");
    ASSERT_FALSE(r.isOk());
    EXPECT_NE(r.status().message().find("at most size - 1 = 3"), std::string::npos)
        << r.status().message();
  }
  {  // a 9x9 Conv on an 8x8 input has no output position
    Model m;
    m.input("x", onnx::TensorProto::FLOAT, {1, 1, 8, 8});
    auto* w = m.g().add_initializer();
    w->set_name("W");
    w->set_data_type(onnx::TensorProto::FLOAT);
    for (int64_t d : {4, 1, 9, 9}) w->add_dims(d);
    for (int i = 0; i < 4 * 81; ++i) w->add_float_data(1.f);
    m.node("Conv", {"x", "W"}, {"y"}, "conv");
    m.output("y");
    auto r = importModel(m, "conv9.onnx");
    ASSERT_FALSE(r.isOk());
    EXPECT_NE(r.status().message().find("node 'conv'"), std::string::npos) << r.status().message();
    EXPECT_NE(r.status().message().find("output size 0"), std::string::npos)
        << r.status().message();
  }
  {  // Split with sizes [1, 1, 1] into 2 outputs
    Model m;
    m.input("x", onnx::TensorProto::FLOAT, {3});
    int64Initializer(m, "s", {3}, {1, 1, 1});
    m.node("Split", {"x", "s"}, {"a", "b"}, "split");
    m.output("a");
    m.output("b");
    auto r = importModel(m, "split3.onnx");
    ASSERT_FALSE(r.isOk());
    EXPECT_NE(r.status().message().find("node 'split'"), std::string::npos) << r.status().message();
    EXPECT_NE(r.status().message().find("lists 2 outputs"), std::string::npos)
        << r.status().message();
  }
}

TEST(OnnxImport, ExternalDataOffsetsAreStrictDecimals) {
  std::string dir = test::testDir() + "/ext_strict";
  ::mkdir(dir.c_str(), 0755);
  {
    std::ofstream f(dir + "/w.bin", std::ios::binary);
    f << std::string(76, '\0');
  }
  auto makeModel = [&](const std::string& offset, const std::string& length) {
    Model m;
    m.input("x", onnx::TensorProto::FLOAT, {3});
    auto* w = m.g().add_initializer();
    w->set_name("W");
    w->set_data_type(onnx::TensorProto::FLOAT);
    w->add_dims(3);
    w->set_data_location(onnx::TensorProto::EXTERNAL);
    auto* kv = w->add_external_data();
    kv->set_key("location");
    kv->set_value("w.bin");
    kv = w->add_external_data();
    kv->set_key("offset");
    kv->set_value(offset);
    if (!length.empty()) {
      kv = w->add_external_data();
      kv->set_key("length");
      kv->set_value(length);
    }
    m.node("Add", {"x", "W"}, {"y"});
    m.output("y");
    std::string path = dir + "/m.onnx";
    std::ofstream(path, std::ios::binary) << m.m.SerializeAsString();
    return path;
  };
  ASSERT_TRUE(importOnnx(makeModel("64", "12"), test::contribRegistry()).isOk());
  for (const char* bad : {"garbage", "0x40", "-4", "12abc", " 4", "99999999999999999999"}) {
    auto r = importOnnx(makeModel(bad, "12"), test::contribRegistry());
    ASSERT_FALSE(r.isOk()) << bad;
    EXPECT_NE(r.status().message().find("'offset' is '" + std::string(bad) + "'"),
              std::string::npos)
        << r.status().message();
    EXPECT_NE(r.status().message().find("initializer 'W'"), std::string::npos);
  }
  auto len = importOnnx(makeModel("0", "0x0c"), test::contribRegistry());
  ASSERT_FALSE(len.isOk());
  EXPECT_NE(len.status().message().find("'length' is '0x0c'"), std::string::npos)
      << len.status().message();
  auto past = importOnnx(makeModel("10000", ""), test::contribRegistry());
  ASSERT_FALSE(past.isOk());
  EXPECT_NE(past.status().message().find("offset 10000 lies past the end"), std::string::npos)
      << past.status().message();
  EXPECT_EQ(past.status().message().find("holds -"), std::string::npos) << past.status().message();
}

TEST(OnnxImport, IrVersionAndOpsetsAreCheckedAsOnnxRuntimeDoes) {
  auto model = [](int64_t ir) {
    Model m;
    m.m.set_ir_version(ir);
    m.input("x", onnx::TensorProto::FLOAT, {3});
    m.node("Relu", {"x"}, {"y"}, "relu");
    m.output("y");
    return m;
  };
  ASSERT_TRUE(importModel(model(8), "ok.onnx").isOk());
  auto ir0 = importModel(model(0), "ir0.onnx");
  ASSERT_FALSE(ir0.isOk());
  EXPECT_NE(ir0.status().message().find("IR version 0"), std::string::npos)
      << ir0.status().message();
  EXPECT_EQ(ir0.status().message().find("does not parse"), std::string::npos);
  auto ir99 = importModel(model(99), "ir99.onnx");
  ASSERT_FALSE(ir99.isOk());
  EXPECT_EQ(ir99.status().code(), StatusCode::kVersion);
  EXPECT_NE(ir99.status().message().find("IR version 99"), std::string::npos)
      << ir99.status().message();
  Model none = model(8);
  none.m.clear_opset_import();
  auto no = importModel(none, "noopset.onnx");
  ASSERT_FALSE(no.isOk());
  EXPECT_NE(no.status().message().find("imports no opset"), std::string::npos)
      << no.status().message();
  Model other = model(8);
  other.m.mutable_opset_import(0)->set_domain("com.example");
  auto oth = importModel(other, "otheropset.onnx");
  ASSERT_FALSE(oth.isOk());
  EXPECT_NE(oth.status().message().find("node 'relu'"), std::string::npos)
      << oth.status().message();
  EXPECT_NE(oth.status().message().find("no entry for that domain"), std::string::npos);
  for (int64_t v : {int64_t{0}, int64_t{-1}, int64_t{9999}, int64_t{1} << 62}) {
    Model m = model(8);
    m.m.mutable_opset_import(0)->set_version(v);
    auto r = importModel(m, "opset.onnx");
    ASSERT_FALSE(r.isOk()) << v;
    EXPECT_NE(r.status().message().find("version " + std::to_string(v)), std::string::npos)
        << r.status().message();
    EXPECT_EQ(r.status().code(), v > 0 ? StatusCode::kVersion : StatusCode::kInvalidArgument);
  }
}

TEST(OnnxImport, FifosAndDirectoriesAreRefusedWithoutBlocking) {
  const std::string fifo = test::testDir() + "/model.onnx";
  ::unlink(fifo.c_str());
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0644), 0);
  auto r = importOnnx(fifo, test::contribRegistry());
  ASSERT_FALSE(r.isOk());
  EXPECT_NE(r.status().message().find("FIFO"), std::string::npos) << r.status().message();
  EXPECT_NE(r.status().message().find(fifo), std::string::npos);
  auto d = importOnnx(test::testDir(), test::contribRegistry());
  ASSERT_FALSE(d.isOk());
  EXPECT_NE(d.status().message().find("directory"), std::string::npos) << d.status().message();
  ::unlink(fifo.c_str());
}

TEST(OnnxImport, SliceWithExtremeStepsAndEnds) {
  // Steps of INT64_MIN and INT64_MAX, ends near INT64_MAX and INT64_MIN: one element each, with no
  // overflow on the way (UBSan reported the length and stride arithmetic).
  constexpr int64_t kMin = std::numeric_limits<int64_t>::min();
  constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
  Model m;
  m.input("x", onnx::TensorProto::FLOAT, {2, 4});
  int64Initializer(m, "axes", {1}, {1});
  int64Initializer(m, "s1", {1}, {3});
  int64Initializer(m, "e1", {1}, {kMin});
  int64Initializer(m, "st1", {1}, {kMin});
  int64Initializer(m, "s2", {1}, {0});
  int64Initializer(m, "e2", {1}, {kMax});
  int64Initializer(m, "st2", {1}, {kMax});
  m.node("Slice", {"x", "s1", "e1", "axes", "st1"}, {"a"}, "down");
  m.node("Slice", {"x", "s2", "e2", "axes", "st2"}, {"b"}, "up");
  m.output("a");
  m.output("b");
  auto net = importModel(m, "slice_extremes.onnx");
  ASSERT_TRUE(net.isOk()) << net.status().message();
  EXPECT_EQ(net->shapeOf(*net->findTensor("a")), "[2, 1]");
  EXPECT_EQ(net->shapeOf(*net->findTensor("b")), "[2, 1]");
  auto plan = Builder(test::contribRegistry()).buildSerializedNetwork(*net, {});
  ASSERT_TRUE(plan.isOk()) << plan.status().message();
  auto e = *Engine::loadMemory(*plan, "slice", test::contribRegistry());
  auto ctx = std::move(e->createExecutionContext()).value();
  std::vector<float> in = {0, 1, 2, 3, 4, 5, 6, 7};
  ASSERT_TRUE(ctx->setInput("x", in.data(), 32).isOk());
  ASSERT_TRUE(ctx->execute().isOk());
  const float* a = ctx->output("a")->as<float>();
  const float* b = ctx->output("b")->as<float>();
  EXPECT_EQ(a[0], 3.f);
  EXPECT_EQ(a[1], 7.f);
  EXPECT_EQ(b[0], 0.f);
  EXPECT_EQ(b[1], 4.f);
}

TEST(OnnxImport, ReshapeWhoseKnownProductOverflowsIsRefused) {
  // The known part of the target shape multiplies to 2^64 (it wrapped to 0 before the product
  // was checked): no shape can match it, so the build must refuse it at every profile.
  Model m;
  m.input("x", onnx::TensorProto::FLOAT, {-1, 6});
  int64Initializer(m, "shape", {4}, {-1, 2147483648, 2147483648, 4});
  m.node("Reshape", {"x", "shape"}, {"y"}, "reshape");
  m.output("y");
  auto net = importModel(m, "reshape_overflow.onnx");
  Status st = net.status();
  if (net.isOk()) {
    BuilderConfig cfg;
    cfg.profiles.push_back(OptimizationProfile{}.set("x", {1, 6}, {2, 6}, {4, 6}));
    st = Builder(test::contribRegistry()).buildSerializedNetwork(*net, cfg).status();
  }
  ASSERT_FALSE(st.isOk());
  EXPECT_NE(st.message().find("reshape"), std::string::npos) << st.message();
}

TEST(OnnxImport, WindowAttributesOverADimensionsMaximumAreErrors) {
  // Dilations (or strides, pads) of 2^62 overflowed the window span (k - 1) * d + 1 of Conv,
  // MaxPool and ConvTranspose (UBSan, issue 21): each is an error naming the node and attribute.
  constexpr int64_t kHuge = int64_t{1} << 62;
  auto weights = [](Model& m, std::vector<int64_t> dims) {
    auto* w = m.g().add_initializer();
    w->set_name("W");
    w->set_data_type(onnx::TensorProto::FLOAT);
    int64_t n = 1;
    for (int64_t d : dims) w->add_dims(d), n *= d;
    for (int64_t i = 0; i < n; ++i) w->add_float_data(1.f);
  };
  struct Case {
    const char* op;
    const char* attr;
    std::vector<int64_t> value;
  };
  for (const Case& c :
       {Case{"Conv", "dilations", {kHuge, 1}}, Case{"Conv", "strides", {1, kHuge}},
        Case{"Conv", "pads", {0, 0, kHuge, 0}}, Case{"MaxPool", "dilations", {kHuge, kHuge}},
        Case{"AveragePool", "strides", {kHuge, 1}}, Case{"ConvTranspose", "dilations", {kHuge, 1}},
        Case{"ConvTranspose", "strides", {1, kHuge}},
        Case{"ConvTranspose", "pads", {0, kHuge, 0, 0}}}) {
    Model m;
    m.input("x", onnx::TensorProto::FLOAT, {1, 1, 4, 4});
    const std::string op = c.op;
    const bool pool = op == "MaxPool" || op == "AveragePool";
    if (!pool) weights(m, {1, 1, 3, 3});
    auto* n = m.node(op, pool ? std::vector<std::string>{"x"} : std::vector<std::string>{"x", "W"},
                     {"y"}, "win");
    if (pool) intsAttr(n, "kernel_shape", {3, 3});
    intsAttr(n, c.attr, c.value);
    m.output("y");
    auto r = importModel(m, uniq("window.onnx"));
    ASSERT_FALSE(r.isOk()) << op << " " << c.attr;
    EXPECT_NE(r.status().message().find("node 'win'"), std::string::npos) << r.status().message();
    EXPECT_NE(r.status().message().find(c.attr), std::string::npos) << r.status().message();
    EXPECT_NE(r.status().message().find("2^31 - 1"), std::string::npos) << r.status().message();
  }
}

TEST(OnnxImport, EmptyInitializersImportBuildAndRun) {
  // An initializer of zero elements has no data at all: copying "its bytes" was a memcpy from a
  // null pointer (UBSan, issue 21). Concat of x with an empty [0, 3] tensor is x.
  Model m;
  m.input("x", onnx::TensorProto::FLOAT, {2, 3});
  for (const char* name : {"e", "r"}) {
    auto* t = m.g().add_initializer();
    t->set_name(name);
    t->set_data_type(onnx::TensorProto::FLOAT);
    t->add_dims(0);
    t->add_dims(3);
    if (std::string(name) == "r") t->set_raw_data("");
  }
  m.node("Concat", {"e", "x", "r"}, {"y"}, "cat")->add_attribute()->CopyFrom([] {
    onnx::AttributeProto a;
    a.set_name("axis");
    a.set_type(onnx::AttributeProto::INT);
    a.set_i(0);
    return a;
  }());
  m.output("y");
  auto net = importModel(m, uniq("empty_init.onnx"));
  ASSERT_TRUE(net.isOk()) << net.status().message();
  auto plan = Builder(test::contribRegistry()).buildSerializedNetwork(*net, {});
  ASSERT_TRUE(plan.isOk()) << plan.status().message();
  auto e = *Engine::loadMemory(*plan, "empty_init", test::contribRegistry());
  auto ctx = std::move(e->createExecutionContext()).value();
  std::vector<float> in = {1, 2, 3, 4, 5, 6};
  ASSERT_TRUE(ctx->setInput("x", in.data(), 24).isOk());
  ASSERT_TRUE(ctx->execute().isOk());
  const float* y = ctx->output("y")->as<float>();
  for (int i = 0; i < 6; ++i) EXPECT_EQ(y[i], in[i]);
}

TEST(OnnxImport, BlocksizeWhoseSquareOverflowsIsAnError) {
  // DepthToSpace / SpaceToDepth with blocksize 2^40: blocksize^2 wrapped to 0 and the shape rule
  // divided by it (SIGFPE, found by the plan test that edits integer attributes to 2^40).
  for (const char* op : {"DepthToSpace", "SpaceToDepth"}) {
    Model m;
    m.input("x", onnx::TensorProto::FLOAT, {1, 4, 2, 2});
    intAttr(m.node(op, {"x"}, {"y"}, "blocks"), "blocksize", int64_t{1} << 40);
    m.output("y");
    auto r = importModel(m, uniq("blocksize.onnx"));
    ASSERT_FALSE(r.isOk()) << op;
    EXPECT_NE(r.status().message().find("node 'blocks'"), std::string::npos)
        << r.status().message();
    EXPECT_NE(r.status().message().find("'blocksize' must be >= 1 and at most 2^31 - 1, got "
                                        "1099511627776"),
              std::string::npos)
        << r.status().message();
  }
}

// A shape rule's check that fails at a profile point names the node, the point and the values,
// and lists the node's inputs as numbers there (a dynamic export's symbolic dims can run long).
TEST(OnnxImport, AProfilePointWhereShapesDisagreeListsTheInputsAsNumbers) {
  test::Model m;
  m.input("x", onnx::TensorProto::FLOAT, {-1, 3});
  m.input("y", onnx::TensorProto::FLOAT, {-1, 3});
  m.node("Add", {"x", "y"}, {"s"}, "add");
  m.output("s", onnx::TensorProto::FLOAT);
  auto net = importOnnx(m.save("disagree.onnx"), test::contribRegistry());
  ASSERT_TRUE(net.isOk()) << net.status().message();
  BuilderConfig cfg;
  cfg.profiles.push_back(
      OptimizationProfile{}.set("x", {2, 3}, {4, 3}, {4, 3}).set("y", {3, 3}, {4, 3}, {4, 3}));
  auto plan = Builder(test::contribRegistry()).buildSerializedNetwork(*net, cfg);
  ASSERT_FALSE(plan.isOk());
  const std::string& msg = plan.status().message();
  EXPECT_NE(msg.find("node 'add'"), std::string::npos) << msg;
  EXPECT_NE(msg.find("(2 vs 3)"), std::string::npos) << msg;
  EXPECT_NE(msg.find("its inputs at the min shapes of optimization profile 0: 'x' 2x3, 'y' 3x3"),
            std::string::npos)
      << msg;
}
