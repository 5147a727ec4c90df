// ONNX control flow through import, build and run on the CPU. If: the branch taken runs (the other
// never does), branches of different lengths, a condition known at import, nested Ifs, the import
// errors. Loop and Scan: unrolled, with their limits and errors; a Loop whose trip count or
// condition is run-time data, unrolled to its bound with guarded iterations.
#include <gtest/gtest.h>

#include <algorithm>
#include <limits>

#include "onnx_model.h"
#include "opforge/builder.h"
#include "opforge/runtime.h"

using namespace opforge;

namespace {

using test::Model;

onnx::NodeProto* add(onnx::GraphProto& g, const std::string& op, std::vector<std::string> in,
                     std::vector<std::string> out, const std::string& name = "") {
  return test::addNode(g, op, std::move(in), std::move(out), name);
}
void graphOutput(onnx::GraphProto& g, const std::string& name) {
  g.add_output()->set_name(name);
}
void intAttr(onnx::NodeProto* n, const std::string& k, int64_t v) {
  test::intAttr(n, k, v);
}
using test::constInt64;
void constBool(onnx::GraphProto& g, const std::string& out, bool v) {
  auto* n = add(g, "Constant", {}, {out});
  auto* a = n->add_attribute();
  a->set_name("value");
  a->set_type(onnx::AttributeProto::TENSOR);
  a->mutable_t()->set_data_type(onnx::TensorProto::BOOL);
  a->mutable_t()->add_int32_data(v ? 1 : 0);
}
// An If node in `g` with two empty branches, returned for the caller to fill.
onnx::NodeProto* ifNode(onnx::GraphProto& g, const std::string& cond, std::vector<std::string> outs,
                        const std::string& name, onnx::GraphProto** then_g,
                        onnx::GraphProto** else_g) {
  auto* n = add(g, "If", {cond}, std::move(outs), name);
  for (const char* b : {"then_branch", "else_branch"}) {
    auto* a = n->add_attribute();
    a->set_name(b);
    a->set_type(onnx::AttributeProto::GRAPH);
    a->mutable_g()->set_name(b);
  }
  *then_g = n->mutable_attribute(0)->mutable_g();
  *else_g = n->mutable_attribute(1)->mutable_g();
  return n;
}

std::shared_ptr<Registry> reg() {
  return Registry::global();
}

std::shared_ptr<const Engine> build(const Model& m, const std::string& name,
                                    const BuilderConfig& cfg = {}) {
  auto net = importOnnxBytes(m.m.SerializeAsString(), name, "", reg());
  EXPECT_TRUE(net.isOk()) << net.status().message();
  if (!net) return nullptr;
  auto plan = Builder(reg()).buildSerializedNetwork(*net, cfg);
  EXPECT_TRUE(plan.isOk()) << plan.status().message();
  if (!plan) return nullptr;
  auto e = Engine::loadMemory(*plan, name, reg());
  EXPECT_TRUE(e.isOk()) << e.status().message();
  return e ? *e : nullptr;
}

int countLayers(const Engine& e, const std::string& op) {
  int n = 0;
  for (const auto& l : e.layers()) n += l.op == op;
  return n;
}

// then: Gather(x, idx) (fails on an index out of range); else: ReduceSum(x, axis 0, keepdims).
Model gatherOrSum() {
  Model m;
  m.input("x", onnx::TensorProto::FLOAT, {-1, 3});
  m.input("c", onnx::TensorProto::BOOL, {});
  m.input("idx", onnx::TensorProto::INT64, {1});
  onnx::GraphProto *t, *e;
  ifNode(m.g(), "c", {"y"}, "if", &t, &e);
  intAttr(add(*t, "Gather", {"x", "idx"}, {"g"}, "gather"), "axis", 0);
  graphOutput(*t, "g");
  constInt64(*e, "axes", {1}, {0});
  intAttr(add(*e, "ReduceSum", {"x", "axes"}, {"s"}, "sum"), "keepdims", 1);
  graphOutput(*e, "s");
  m.output("y", onnx::TensorProto::FLOAT);
  return m;
}

}  // namespace

TEST(OnnxIf, OnlyTheBranchTakenRuns) {
  BuilderConfig cfg;
  cfg.profiles.push_back(OptimizationProfile{}.set("x", {1, 3}, {2, 3}, {8, 3}));
  auto e = build(gatherOrSum(), "if_gather.onnx", cfg);
  ASSERT_TRUE(e);
  EXPECT_EQ(countLayers(*e, "opforge::IfSelect v1"), 1);
  auto ctx = std::move(e->createExecutionContext()).value();
  ASSERT_TRUE(ctx->setInputShape("x", {2, 3}).isOk());
  const std::vector<float> x = {1, 2, 3, 10, 20, 30};
  ASSERT_TRUE(ctx->setInput("x", x.data(), 24).isOk());
  auto run = [&](bool c, int64_t idx) {
    const uint8_t cb = c;
    EXPECT_TRUE(ctx->setInput("c", &cb, 1).isOk());
    EXPECT_TRUE(ctx->setInput("idx", &idx, 8).isOk());
    return ctx->execute();
  };
  ASSERT_TRUE(run(true, 1).isOk());
  Tensor y = *ctx->output("y");
  ASSERT_EQ(y.desc.dims, (std::vector<int64_t>{1, 3}));
  for (int i = 0; i < 3; ++i) EXPECT_EQ(y.as<float>()[i], x[3 + i]);
  // The index is out of range, but the Gather is in the branch not taken.
  ASSERT_TRUE(run(false, 100).isOk());
  y = *ctx->output("y");
  for (int i = 0; i < 3; ++i) EXPECT_EQ(y.as<float>()[i], x[i] + x[3 + i]);
  // Taken, it fails, naming the layer; the context stays usable.
  Status bad = run(true, 100);
  ASSERT_FALSE(bad.isOk());
  EXPECT_NE(bad.message().find("gather"), std::string::npos) << bad.message();
  ASSERT_TRUE(run(true, -2).isOk());
  EXPECT_EQ(ctx->output("y")->as<float>()[2], x[2]);
}

TEST(OnnxIf, BranchesOfDifferentLengthsAsTorchvisionsBatchedNms) {
  // torchvision's batched_nms: `if boxes.numel() == 0: return empty` on a data-dependent count.
  // k = NonZero(x > 0) as [K]; y = If(Size(k) == 0, then: [] (INT64 [0]), else: k * 2).
  Model m;
  m.input("x", onnx::TensorProto::FLOAT, {6});
  constInt64(m.g(), "zero_f", {}, {0});
  add(m.g(), "Cast", {"zero_f"}, {"zf"});
  intAttr(m.g().mutable_node(1), "to", onnx::TensorProto::FLOAT);
  add(m.g(), "Greater", {"x", "zf"}, {"pos"});
  add(m.g(), "NonZero", {"pos"}, {"nz"});
  constInt64(m.g(), "flat", {1}, {-1});
  add(m.g(), "Reshape", {"nz", "flat"}, {"k"});
  add(m.g(), "Size", {"k"}, {"n"});
  constInt64(m.g(), "zero", {}, {0});
  add(m.g(), "Equal", {"n", "zero"}, {"empty"});
  onnx::GraphProto *t, *e;
  ifNode(m.g(), "empty", {"y"}, "if", &t, &e);
  constInt64(*t, "none", {0}, {});
  graphOutput(*t, "none");
  constInt64(*e, "two", {}, {2});
  add(*e, "Mul", {"k", "two"}, {"k2"});
  graphOutput(*e, "k2");
  m.output("y", onnx::TensorProto::INT64);
  auto eng = build(m, "if_nms.onnx");
  ASSERT_TRUE(eng);
  auto ctx = std::move(eng->createExecutionContext()).value();
  auto run = [&](std::vector<float> x) -> std::vector<int64_t> {
    EXPECT_TRUE(ctx->setInput("x", x.data(), 24).isOk());
    Status st = ctx->execute();
    EXPECT_TRUE(st.isOk()) << st.message();
    Tensor y = *ctx->output("y");
    EXPECT_EQ(y.desc.rank(), 1);
    return std::vector<int64_t>(y.as<int64_t>(), y.as<int64_t>() + y.desc.dims[0]);
  };
  EXPECT_EQ(run({-1, -2, -3, -4, -5, -6}), std::vector<int64_t>{});
  EXPECT_EQ(run({-1, 2, -3, 4, 5, -6}), (std::vector<int64_t>{2, 6, 8}));
  EXPECT_EQ(run({1, 1, 1, 1, 1, 1}), (std::vector<int64_t>{0, 2, 4, 6, 8, 10}));
  EXPECT_EQ(run({0, 0, 0, 0, 0, 0}), std::vector<int64_t>{});
}

TEST(OnnxIf, AConditionKnownAtImportInlinesTheBranchTaken) {
  for (bool c : {true, false}) {
    // then: Relu(x); else: x itself (an outer value, copied under the output's name).
    Model m;
    m.input("x", onnx::TensorProto::FLOAT, {4});
    constBool(m.g(), "c", c);
    onnx::GraphProto *t, *e;
    ifNode(m.g(), "c", {"y"}, "if", &t, &e);
    add(*t, "Relu", {"x"}, {"r"});
    graphOutput(*t, "r");
    graphOutput(*e, "x");
    m.output("y", onnx::TensorProto::FLOAT);
    auto eng = build(m, c ? "if_true.onnx" : "if_false.onnx");
    ASSERT_TRUE(eng);
    EXPECT_EQ(countLayers(*eng, "opforge::IfSelect v1"), 0);
    auto ctx = std::move(eng->createExecutionContext()).value();
    const std::vector<float> x = {-1, 2, -3, 4};
    ASSERT_TRUE(ctx->setInput("x", x.data(), 16).isOk());
    ASSERT_TRUE(ctx->execute().isOk());
    auto y = ctx->output("y");
    ASSERT_TRUE(y.isOk()) << y.status().message();
    for (int i = 0; i < 4; ++i) EXPECT_EQ(y->as<float>()[i], c ? std::max(x[i], 0.f) : x[i]);
  }
}

// DeBERTa-v2's TorchScript export: `if q.size(-2) != k.size(-2)` on two sizes of one symbol, one
// of them through a Slice whose open end the shape rules clamp (min(S, INT64_MAX)), then Not and a
// Cast to BOOL. The shape rules decide the condition, so the branch taken is inlined, even though
// the branches' outputs differ in rank (which an If whose condition is run-time data refuses).
TEST(OnnxIf, AConditionOnSizesTheShapeRulesDecideInlinesTheBranchTaken) {
  Model m;
  m.input("x", onnx::TensorProto::FLOAT, {-1, -1});
  add(m.g(), "Shape", {"x"}, {"sx"});
  constInt64(m.g(), "one", {1}, {1});
  constInt64(m.g(), "two", {1}, {2});
  constInt64(m.g(), "big", {1}, {std::numeric_limits<int64_t>::max()});
  constInt64(m.g(), "zero", {1}, {0});
  add(m.g(), "Slice", {"sx", "one", "two"}, {"a1"});         // [S]
  add(m.g(), "Slice", {"x", "zero", "big", "one"}, {"xs"});  // x[:, 0:INT64_MAX]: [B, min(S, max)]
  add(m.g(), "Shape", {"xs"}, {"sxs"});
  add(m.g(), "Slice", {"sxs", "one", "two"}, {"a2"});
  add(m.g(), "Equal", {"a1", "a2"}, {"eq"});
  add(m.g(), "Not", {"eq"}, {"ne"});
  intAttr(add(m.g(), "Cast", {"ne"}, {"c"}), "to", onnx::TensorProto::BOOL);
  onnx::GraphProto *t, *e;
  ifNode(m.g(), "c", {"y"}, "if_sizes", &t, &e);
  add(*t, "Relu", {"x"}, {"r"});  // rank 2
  graphOutput(*t, "r");
  constInt64(*e, "ax0", {1}, {0});
  add(*e, "Unsqueeze", {"x", "ax0"}, {"u"});  // rank 3
  graphOutput(*e, "u");
  m.output("y", onnx::TensorProto::FLOAT);
  BuilderConfig cfg;
  cfg.profiles.push_back(OptimizationProfile{}.set("x", {1, 1}, {2, 3}, {4, 8}));
  auto eng = build(m, "if_sizes.onnx", cfg);
  ASSERT_TRUE(eng);
  EXPECT_EQ(countLayers(*eng, "opforge::IfSelect v1"), 0);
  auto ctx = std::move(eng->createExecutionContext()).value();
  ASSERT_TRUE(ctx->setInputShape("x", {2, 3}).isOk());
  const std::vector<float> x = {-1, 2, -3, 4, -5, 6};
  ASSERT_TRUE(ctx->setInput("x", x.data(), 24).isOk());
  ASSERT_TRUE(ctx->execute().isOk());
  auto y = ctx->output("y");
  ASSERT_TRUE(y.isOk()) << y.status().message();
  EXPECT_EQ(y->desc.dims, (std::vector<int64_t>{1, 2, 3}));  // the else branch: sizes are equal
  for (int i = 0; i < 6; ++i) EXPECT_EQ(y->as<float>()[i], x[i]);
}

TEST(OnnxIf, NestedIfsTakeEveryPath) {
  // y = c1 ? (c2 ? x + 1 : x * 3) : -x; the inner If reads x and c2 from the outer graph.
  Model m;
  m.input("x", onnx::TensorProto::FLOAT, {3});
  m.input("c1", onnx::TensorProto::BOOL, {1});
  m.input("c2", onnx::TensorProto::BOOL, {});
  onnx::GraphProto *t, *e, *tt, *te;
  ifNode(m.g(), "c1", {"y"}, "outer", &t, &e);
  ifNode(*t, "c2", {"inner_y"}, "inner", &tt, &te);
  graphOutput(*t, "inner_y");
  constInt64(*tt, "one_i", {}, {1});
  intAttr(add(*tt, "Cast", {"one_i"}, {"one"}), "to", onnx::TensorProto::FLOAT);
  add(*tt, "Add", {"x", "one"}, {"a"});
  graphOutput(*tt, "a");
  constInt64(*te, "three_i", {}, {3});
  intAttr(add(*te, "Cast", {"three_i"}, {"three"}), "to", onnx::TensorProto::FLOAT);
  add(*te, "Mul", {"x", "three"}, {"b"});
  graphOutput(*te, "b");
  add(*e, "Neg", {"x"}, {"n"});
  graphOutput(*e, "n");
  m.output("y", onnx::TensorProto::FLOAT);
  auto eng = build(m, "if_nested.onnx");
  ASSERT_TRUE(eng);
  EXPECT_EQ(countLayers(*eng, "opforge::IfSelect v1"), 2);
  auto ctx = std::move(eng->createExecutionContext()).value();
  const std::vector<float> x = {1, -2, 5};
  ASSERT_TRUE(ctx->setInput("x", x.data(), 12).isOk());
  for (bool c1 : {true, false})
    for (bool c2 : {true, false}) {
      const uint8_t b1 = c1, b2 = c2;
      ASSERT_TRUE(ctx->setInput("c1", &b1, 1).isOk());
      ASSERT_TRUE(ctx->setInput("c2", &b2, 1).isOk());
      ASSERT_TRUE(ctx->execute().isOk());
      const float* y = ctx->output("y")->as<float>();
      for (int i = 0; i < 3; ++i)
        EXPECT_EQ(y[i], c1 ? (c2 ? x[i] + 1 : x[i] * 3) : -x[i]) << c1 << c2 << i;
    }
}

TEST(OnnxIf, ImportErrorsNameTheNodeAndTheBranches) {
  auto importErr = [](const Model& m) {
    auto r = importOnnxBytes(m.m.SerializeAsString(), "bad_if.onnx", "", reg());
    EXPECT_FALSE(r.isOk());
    return r.isOk() ? std::string() : r.status().message();
  };
  {  // different types
    Model m;
    m.input("x", onnx::TensorProto::FLOAT, {3});
    m.input("c", onnx::TensorProto::BOOL, {});
    onnx::GraphProto *t, *e;
    ifNode(m.g(), "c", {"y"}, "if_types", &t, &e);
    graphOutput(*t, "x");
    intAttr(add(*e, "Cast", {"x"}, {"xi"}), "to", onnx::TensorProto::INT64);
    graphOutput(*e, "xi");
    m.output("y");
    const std::string msg = importErr(m);
    EXPECT_NE(msg.find("bad_if.onnx: node 'if_types' (ai.onnx::If): output 0 has another type"),
              std::string::npos)
        << msg;
    EXPECT_NE(msg.find("INT64"), std::string::npos) << msg;
  }
  {  // different ranks
    Model m;
    m.input("x", onnx::TensorProto::FLOAT, {3});
    m.input("c", onnx::TensorProto::BOOL, {});
    onnx::GraphProto *t, *e;
    ifNode(m.g(), "c", {"y"}, "if_ranks", &t, &e);
    graphOutput(*t, "x");
    constInt64(*e, "shape", {2}, {1, 3});
    add(*e, "Reshape", {"x", "shape"}, {"x2"});
    graphOutput(*e, "x2");
    m.output("y");
    const std::string msg = importErr(m);
    EXPECT_NE(msg.find("node 'if_ranks' (ai.onnx::If): output 0 has another rank"),
              std::string::npos)
        << msg;
  }
  {  // a FLOAT condition, and a condition of two elements
    for (bool two : {false, true}) {
      Model m;
      m.input("x", onnx::TensorProto::FLOAT, {3});
      m.input("c", two ? onnx::TensorProto::BOOL : onnx::TensorProto::FLOAT, {two ? 2 : 1});
      onnx::GraphProto *t, *e;
      ifNode(m.g(), "c", {"y"}, "if_cond", &t, &e);
      graphOutput(*t, "x");
      graphOutput(*e, "x");
      m.output("y");
      const std::string msg = importErr(m);
      EXPECT_NE(msg.find(two ? "has shape [2]; If needs a single element"
                             : "is FP32; If needs a BOOL condition"),
                std::string::npos)
          << msg;
    }
  }
  {  // branch output counts
    Model m;
    m.input("x", onnx::TensorProto::FLOAT, {3});
    m.input("c", onnx::TensorProto::BOOL, {});
    onnx::GraphProto *t, *e;
    ifNode(m.g(), "c", {"y"}, "if_count", &t, &e);
    graphOutput(*t, "x");
    graphOutput(*t, "x");
    graphOutput(*e, "x");
    m.output("y");
    EXPECT_NE(importErr(m).find("branch 'then_branch' has 2 outputs; the node lists 1"),
              std::string::npos);
  }
  {  // an unknown op inside a branch is listed with the path to it
    Model m;
    m.input("x", onnx::TensorProto::FLOAT, {3});
    m.input("c", onnx::TensorProto::BOOL, {});
    onnx::GraphProto *t, *e;
    ifNode(m.g(), "c", {"y"}, "if_unknown", &t, &e);
    add(*t, "NoSuchOp", {"x"}, {"z"}, "odd");
    graphOutput(*t, "z");
    graphOutput(*e, "x");
    m.output("y");
    EXPECT_NE(importErr(m).find("if_unknown/then_branch: node 'odd': op 'NoSuchOp'"),
              std::string::npos);
  }
  {  // nesting beyond the limit
    Model m;
    m.input("x", onnx::TensorProto::FLOAT, {3});
    m.input("c", onnx::TensorProto::BOOL, {});
    onnx::GraphProto* g = &m.g();
    for (int d = 0; d < 20; ++d) {
      onnx::GraphProto *t, *e;
      ifNode(*g, "c", {"y" + std::to_string(d)}, "if" + std::to_string(d), &t, &e);
      graphOutput(*e, "x");
      graphOutput(*t, "y" + std::to_string(d + 1));
      g = t;
    }
    add(*g, "Relu", {"x"}, {"y20"});
    m.output("y0");
    const std::string msg = importErr(m);
    EXPECT_NE(msg.find("subgraphs nested more than 16 levels deep"), std::string::npos) << msg;
  }
}

namespace {
// Loop(M, cond, s0) with body: s = s_in + x * (i + 1); scan output: s. M is a Constant.
// trips -1: no M (the body passes its condition on, so the loop never ends).
Model loopModel(int64_t trips, bool runtime_trips = false) {
  Model m;
  m.input("x", onnx::TensorProto::FLOAT, {-1, 2});
  m.input("s0", onnx::TensorProto::FLOAT, {-1, 2});
  if (runtime_trips)
    m.input("M", onnx::TensorProto::INT64, {});
  else if (trips >= 0)
    constInt64(m.g(), "M", {}, {trips});
  auto* loop = add(m.g(), "Loop", {trips >= 0 || runtime_trips ? "M" : "", "", "s0"},
                   {"s_final", "s_all"}, "loop");
  auto* a = loop->add_attribute();
  a->set_name("body");
  a->set_type(onnx::AttributeProto::GRAPH);
  onnx::GraphProto& b = *a->mutable_g();
  for (const char* in : {"i", "c_in", "s_in"}) b.add_input()->set_name(in);
  add(b, "Identity", {"c_in"}, {"c_out"});
  constInt64(b, "one", {}, {1});
  add(b, "Add", {"i", "one"}, {"i1"});
  intAttr(add(b, "Cast", {"i1"}, {"f"}), "to", onnx::TensorProto::FLOAT);
  add(b, "Mul", {"x", "f"}, {"xf"});
  add(b, "Add", {"s_in", "xf"}, {"s_out"});
  add(b, "Identity", {"s_out"}, {"scan"});
  for (const char* o : {"c_out", "s_out", "scan"}) graphOutput(b, o);
  m.output("s_final", onnx::TensorProto::FLOAT);
  m.output("s_all", onnx::TensorProto::FLOAT);
  return m;
}
}  // namespace

TEST(OnnxLoop, AKnownTripCountIsUnrolledWithCarriedValuesAndScanOutputs) {
  BuilderConfig cfg;
  cfg.profiles.push_back(
      OptimizationProfile{}.set("x", {1, 2}, {2, 2}, {4, 2}).set("s0", {1, 2}, {2, 2}, {4, 2}));
  auto e = build(loopModel(3), "loop3.onnx", cfg);
  ASSERT_TRUE(e);
  auto ctx = std::move(e->createExecutionContext()).value();
  ASSERT_TRUE(ctx->setInputShape("x", {2, 2}).isOk());
  ASSERT_TRUE(ctx->setInputShape("s0", {2, 2}).isOk());
  const std::vector<float> x = {1, 2, 3, 4}, s0 = {10, 20, 30, 40};
  ASSERT_TRUE(ctx->setInput("x", x.data(), 16).isOk());
  ASSERT_TRUE(ctx->setInput("s0", s0.data(), 16).isOk());
  ASSERT_TRUE(ctx->execute().isOk());
  Tensor fin = *ctx->output("s_final"), all = *ctx->output("s_all");
  ASSERT_EQ(all.desc.dims, (std::vector<int64_t>{3, 2, 2}));
  for (int k = 0; k < 4; ++k) {
    float s = s0[k];
    for (int i = 0; i < 3; ++i) {
      s += x[k] * static_cast<float>(i + 1);
      EXPECT_EQ(all.as<float>()[i * 4 + k], s) << i << " " << k;
    }
    EXPECT_EQ(fin.as<float>()[k], s);
  }
}

TEST(OnnxLoop, TripCountsOverTheLimitAreClearErrors) {
  auto importStatus = [](const Model& m) {
    return importOnnxBytes(m.m.SerializeAsString(), "loop.onnx", "", reg()).status();
  };
  Status st = importStatus(loopModel(1000000000));
  EXPECT_EQ(st.code(), StatusCode::kOutOfRange);
  EXPECT_NE(st.message().find("trip count 1000000000 is more than opforge unrolls (4096"),
            std::string::npos)
      << st.message();
  // No trip count, and the body passes its (true) condition on: an error at once, not after
  // unrolling 4096 iterations.
  st = importStatus(loopModel(-1));
  EXPECT_EQ(st.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(st.message().find("node 'loop' (ai.onnx::Loop): the loop never ends: it has no trip "
                              "count M, its condition is absent (true) and the body passes the "
                              "condition on unchanged ('c_out')"),
            std::string::npos)
      << st.message();
  // No iteration: the carried value is the initial one, but the scan output's shape is unknown.
  st = importStatus(loopModel(0));
  EXPECT_EQ(st.code(), StatusCode::kUnsupported);
  EXPECT_NE(st.message().find("runs no iteration"), std::string::npos) << st.message();
}

namespace {
BuilderConfig loopProfile() {
  BuilderConfig cfg;
  cfg.profiles.push_back(
      OptimizationProfile{}.set("x", {1, 2}, {2, 2}, {4, 2}).set("s0", {1, 2}, {2, 2}, {4, 2}));
  return cfg;
}
}  // namespace

// M from run-time data: the loop is unrolled to the bound, each iteration guarded by i < M; the
// scan output grows with the iterations run, and a run past the bound fails naming the loop.
TEST(OnnxLoop, ATripCountFromRunTimeDataRunsThatManyIterations) {
  auto e = build(loopModel(0, true), "loopM.onnx", loopProfile());
  ASSERT_TRUE(e);
  EXPECT_EQ(countLayers(*e, "opforge::LoopLimit v1"), 2);  // one per loop output
  auto ctx = std::move(e->createExecutionContext()).value();
  const std::vector<float> x = {1, 2, 3, 4}, s0 = {10, 20, 30, 40};
  auto run = [&](int64_t trips) {
    EXPECT_TRUE(ctx->setInputShape("x", {2, 2}).isOk());
    EXPECT_TRUE(ctx->setInputShape("s0", {2, 2}).isOk());
    EXPECT_TRUE(ctx->setInputShape("M", {}).isOk());
    EXPECT_TRUE(ctx->setInput("x", x.data(), 16).isOk());
    EXPECT_TRUE(ctx->setInput("s0", s0.data(), 16).isOk());
    EXPECT_TRUE(ctx->setInput("M", &trips, 8).isOk());
    return ctx->execute();
  };
  for (int64_t trips : {int64_t{3}, int64_t{0}, int64_t{1}, int64_t{64}, int64_t{-5}}) {
    SCOPED_TRACE(trips);
    ASSERT_TRUE(run(trips).isOk());
    const int64_t n = std::max<int64_t>(trips, 0);
    Tensor fin = *ctx->output("s_final"), all = *ctx->output("s_all");
    ASSERT_EQ(all.desc.dims, (std::vector<int64_t>{n, 2, 2}));
    for (int k = 0; k < 4; ++k) {
      float sum = s0[k];
      for (int64_t i = 0; i < n; ++i) {
        sum += x[k] * static_cast<float>(i + 1);
        EXPECT_EQ(all.as<float>()[i * 4 + k], sum) << i << " " << k;
      }
      EXPECT_EQ(fin.as<float>()[k], sum);
    }
  }
  const Status st = run(65);
  EXPECT_EQ(st.code(), StatusCode::kOutOfRange);
  EXPECT_NE(st.message().find("loopM.onnx: node 'loop' (ai.onnx::Loop): at run time the loop "
                              "needs more than 64 iterations"),
            std::string::npos)
      << st.message();
  ASSERT_TRUE(run(2).isOk());  // the context is still usable
  EXPECT_EQ(ctx->output("s_all")->desc.dims, (std::vector<int64_t>{2, 2, 2}));
}

// The unroll bound is an import option: 8 iterations run, 9 fail naming the bound; 0 is refused.
TEST(OnnxLoop, TheDynamicUnrollBoundIsAnImportOption) {
  OnnxImportOptions opts;
  opts.max_dynamic_loop_iterations = 8;
  const Model m = loopModel(0, true);
  auto net = importOnnxBytes(m.m.SerializeAsString(), "loop8.onnx", "", reg(), opts);
  ASSERT_TRUE(net.isOk()) << net.status().message();
  auto plan = Builder(reg()).buildSerializedNetwork(*net, loopProfile());
  ASSERT_TRUE(plan.isOk()) << plan.status().message();
  auto e = std::move(Engine::loadMemory(std::move(*plan), "loop8.onnx", reg())).value();
  auto ctx = std::move(e->createExecutionContext()).value();
  const std::vector<float> x = {1, 2, 3, 4}, s0 = {10, 20, 30, 40};
  auto run = [&](int64_t trips) {
    EXPECT_TRUE(ctx->setInputShape("x", {2, 2}).isOk());
    EXPECT_TRUE(ctx->setInputShape("s0", {2, 2}).isOk());
    EXPECT_TRUE(ctx->setInput("x", x.data(), 16).isOk());
    EXPECT_TRUE(ctx->setInput("s0", s0.data(), 16).isOk());
    EXPECT_TRUE(ctx->setInput("M", &trips, 8).isOk());
    return ctx->execute();
  };
  ASSERT_TRUE(run(8).isOk());
  EXPECT_EQ(ctx->output("s_all")->desc.dims, (std::vector<int64_t>{8, 2, 2}));
  const Status st = run(9);
  EXPECT_EQ(st.code(), StatusCode::kOutOfRange);
  EXPECT_NE(st.message().find("needs more than 8 iterations"), std::string::npos) << st.message();
  opts.max_dynamic_loop_iterations = 0;
  const Status bad =
      importOnnxBytes(m.m.SerializeAsString(), "loop0.onnx", "", reg(), opts).status();
  EXPECT_EQ(bad.code(), StatusCode::kInvalidArgument) << bad.message();
  EXPECT_NE(bad.message().find("max_dynamic_loop_iterations is 0; it must be 1 to 4096"),
            std::string::npos)
      << bad.message();
}

// A while loop: no M, the condition computed by the body from the data (double x until its
// largest element reaches a limit), the initial condition an input too.
TEST(OnnxLoop, AConditionFromRunTimeDataStopsTheLoop) {
  Model m;
  m.input("x", onnx::TensorProto::FLOAT, {2});
  m.input("limit", onnx::TensorProto::FLOAT, {});
  m.input("go", onnx::TensorProto::BOOL, {});
  auto* loop = add(m.g(), "Loop", {"", "go", "x"}, {"x_final", "x_all"}, "while");
  auto* a = loop->add_attribute();
  a->set_name("body");
  a->set_type(onnx::AttributeProto::GRAPH);
  onnx::GraphProto& b = *a->mutable_g();
  for (const char* in : {"i", "c_in", "x_in"}) b.add_input()->set_name(in);
  add(b, "Add", {"x_in", "x_in"}, {"x_out"});
  intAttr(add(b, "ReduceMax", {"x_out"}, {"top"}), "keepdims", 0);
  add(b, "Less", {"top", "limit"}, {"c_out"});
  add(b, "Identity", {"x_out"}, {"scan"});
  for (const char* o : {"c_out", "x_out", "scan"}) graphOutput(b, o);
  m.output("x_final", onnx::TensorProto::FLOAT);
  m.output("x_all", onnx::TensorProto::FLOAT);
  auto e = build(m, "while.onnx");
  ASSERT_TRUE(e);
  auto ctx = std::move(e->createExecutionContext()).value();
  auto run = [&](float limit, bool go) {
    const std::vector<float> x = {1, 3};
    const uint8_t g = go ? 1 : 0;
    EXPECT_TRUE(ctx->setInput("x", x.data(), 8).isOk());
    EXPECT_TRUE(ctx->setInput("limit", &limit, 4).isOk());
    EXPECT_TRUE(ctx->setInput("go", &g, 1).isOk());
    return ctx->execute();
  };
  ASSERT_TRUE(run(20, true).isOk());  // [2, 6], [4, 12], [8, 24]: 24 stops it
  Tensor fin = *ctx->output("x_final"), all = *ctx->output("x_all");
  EXPECT_EQ(fin.as<float>()[0], 8);
  EXPECT_EQ(fin.as<float>()[1], 24);
  ASSERT_EQ(all.desc.dims, (std::vector<int64_t>{3, 2}));
  const float want[] = {2, 6, 4, 12, 8, 24};
  for (int i = 0; i < 6; ++i) EXPECT_EQ(all.as<float>()[i], want[i]) << i;
  ASSERT_TRUE(run(20, false).isOk());  // no iteration
  EXPECT_EQ(ctx->output("x_final")->as<float>()[1], 3);
  EXPECT_EQ(ctx->output("x_all")->desc.dims, (std::vector<int64_t>{0, 2}));
  ASSERT_TRUE(run(1, true).isOk());  // one iteration: 6 >= 1
  EXPECT_EQ(ctx->output("x_all")->desc.dims, (std::vector<int64_t>{1, 2}));
  const Status st = run(1e30f, true);  // 3 * 2^64 < 1e30: more than 64 doublings
  EXPECT_EQ(st.code(), StatusCode::kOutOfRange) << st.message();
  EXPECT_NE(st.message().find("node 'while' (ai.onnx::Loop): at run time the loop needs more "
                              "than 64 iterations"),
            std::string::npos)
      << st.message();
}

namespace {
// A Scan body: state s_out = s_in + xt, and `outputs` scan outputs o1, o2, ... each s_out.
void addRunningSumBody(onnx::NodeProto* sc, int outputs) {
  auto* a = sc->add_attribute();
  a->set_name("body");
  a->set_type(onnx::AttributeProto::GRAPH);
  onnx::GraphProto& b = *a->mutable_g();
  for (const char* in : {"s_in", "xt"}) b.add_input()->set_name(in);
  add(b, "Add", {"s_in", "xt"}, {"s_out"});
  graphOutput(b, "s_out");
  for (int k = 1; k <= outputs; ++k) {
    add(b, "Identity", {"s_out"}, {"o" + std::to_string(k)});
    graphOutput(b, "o" + std::to_string(k));
  }
}
}  // namespace

TEST(OnnxScan, UnrolledForwardAndReversedAlongAnAxis) {
  // Scan (opset 9+): state = state + x[:, t]; scan output 0 forward, 1 reversed; the input is read
  // along axis 1 in reverse.
  Model m;
  m.m.mutable_opset_import(0)->set_version(11);
  m.input("init", onnx::TensorProto::FLOAT, {2});
  m.input("x", onnx::TensorProto::FLOAT, {2, 3});
  auto* sc = add(m.g(), "Scan", {"init", "x"}, {"final", "fwd", "rev"}, "scan");
  intAttr(sc, "num_scan_inputs", 1);
  test::intsAttr(sc, "scan_input_axes", {1});
  test::intsAttr(sc, "scan_input_directions", {1});
  test::intsAttr(sc, "scan_output_directions", {0, 1});
  addRunningSumBody(sc, 2);
  for (const char* o : {"final", "fwd", "rev"}) m.output(o, onnx::TensorProto::FLOAT);
  auto e = build(m, "scan.onnx");
  ASSERT_TRUE(e);
  auto ctx = std::move(e->createExecutionContext()).value();
  const std::vector<float> init = {100, 200}, x = {1, 2, 3, 4, 5, 6};
  ASSERT_TRUE(ctx->setInput("init", init.data(), 8).isOk());
  ASSERT_TRUE(ctx->setInput("x", x.data(), 24).isOk());
  ASSERT_TRUE(ctx->execute().isOk());
  // Steps read columns 2, 1, 0: states 103/206, 105/211, 106/215.
  const std::vector<float> steps = {103, 206, 105, 211, 106, 215};
  Tensor fwd = *ctx->output("fwd"), rev = *ctx->output("rev"), fin = *ctx->output("final");
  ASSERT_EQ(fwd.desc.dims, (std::vector<int64_t>{3, 2}));
  for (int i = 0; i < 6; ++i) {
    EXPECT_EQ(fwd.as<float>()[i], steps[i]) << i;
    EXPECT_EQ(rev.as<float>()[i], steps[(2 - i / 2) * 2 + i % 2]) << i;
  }
  EXPECT_EQ(fin.as<float>()[0], 106);
  EXPECT_EQ(fin.as<float>()[1], 215);
}

// A Scan whose sequence length is a run-time dimension becomes a Loop with M = that length: the
// same body as above over x [2, L] read in reverse along axis 1, outputs forward, reversed and
// stacked along axis 1, at L = 3, 1 and 5 from one plan; past the dynamic-iteration bound (64) the
// run fails naming the limit.
TEST(OnnxScan, ARunTimeSequenceLengthRunsAsALoop) {
  Model m;
  m.m.mutable_opset_import(0)->set_version(11);
  m.input("init", onnx::TensorProto::FLOAT, {2});
  m.input("x", onnx::TensorProto::FLOAT, {2, -1});
  auto* sc = add(m.g(), "Scan", {"init", "x"}, {"final", "fwd", "rev", "cols"}, "scan");
  intAttr(sc, "num_scan_inputs", 1);
  test::intsAttr(sc, "scan_input_axes", {1});
  test::intsAttr(sc, "scan_input_directions", {1});
  test::intsAttr(sc, "scan_output_directions", {0, 1, 0});
  test::intsAttr(sc, "scan_output_axes", {0, 0, -1});
  addRunningSumBody(sc, 3);
  for (const char* o : {"final", "fwd", "rev", "cols"}) m.output(o, onnx::TensorProto::FLOAT);
  BuilderConfig cfg;
  cfg.profiles.push_back(OptimizationProfile{}.set("x", {2, 1}, {2, 3}, {2, 80}));
  auto e = build(m, "scan_dynamic.onnx", cfg);
  ASSERT_TRUE(e);
  auto ctx = std::move(e->createExecutionContext()).value();
  const std::vector<float> init = {100, 200};
  for (int len : {3, 1, 5}) {
    std::vector<float> x(2 * len);
    for (int i = 0; i < 2 * len; ++i) x[i] = static_cast<float>(i + 1);
    ASSERT_TRUE(ctx->setInputShape("x", {2, len}).isOk());
    ASSERT_TRUE(ctx->setInput("init", init.data(), 8).isOk());
    ASSERT_TRUE(ctx->setInput("x", x.data(), x.size() * 4).isOk());
    const Status st = ctx->execute();
    ASSERT_TRUE(st.isOk()) << st.message();
    // Step s reads column len-1-s; the states after each step:
    std::vector<float> steps;
    float s0 = 100, s1 = 200;
    for (int s = 0; s < len; ++s) {
      s0 += x[len - 1 - s];
      s1 += x[len + len - 1 - s];
      steps.push_back(s0);
      steps.push_back(s1);
    }
    Tensor fwd = *ctx->output("fwd"), rev = *ctx->output("rev"), cols = *ctx->output("cols");
    Tensor fin = *ctx->output("final");
    ASSERT_EQ(fwd.desc.dims, (std::vector<int64_t>{len, 2})) << len;
    ASSERT_EQ(rev.desc.dims, (std::vector<int64_t>{len, 2})) << len;
    ASSERT_EQ(cols.desc.dims, (std::vector<int64_t>{2, len})) << len;
    for (int i = 0; i < 2 * len; ++i) {
      EXPECT_EQ(fwd.as<float>()[i], steps[i]) << len << " " << i;
      EXPECT_EQ(rev.as<float>()[i], steps[(len - 1 - i / 2) * 2 + i % 2]) << len << " " << i;
      EXPECT_EQ(cols.as<float>()[i], steps[(i % len) * 2 + i / len]) << len << " " << i;
    }
    EXPECT_EQ(fin.as<float>()[0], steps[2 * len - 2]) << len;
    EXPECT_EQ(fin.as<float>()[1], steps[2 * len - 1]) << len;
  }
  std::vector<float> x(2 * 70, 1.0f);
  ASSERT_TRUE(ctx->setInputShape("x", {2, 70}).isOk());
  ASSERT_TRUE(ctx->setInput("init", init.data(), 8).isOk());
  ASSERT_TRUE(ctx->setInput("x", x.data(), x.size() * 4).isOk());
  const Status st = ctx->execute();
  EXPECT_EQ(st.code(), StatusCode::kOutOfRange) << st.message();
  EXPECT_NE(st.message().find("more than 64 iterations"), std::string::npos) << st.message();
}
