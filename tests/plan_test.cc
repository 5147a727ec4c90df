// Plan files: written atomically, checked on load (magic, size, checksum, version, ops).
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <chrono>
#include <cstddef>
#include <fstream>
#include <functional>
#include <limits>

#include "op_harness.h"
#include "opforge/io.h"
#include "plan/plan.h"

using namespace opforge;

namespace {
std::vector<uint8_t> padPlan() {
  NetworkDefinition net(test::contribRegistry());
  auto x = *net.addInput("x", DataType::kFloat32, {2, 6});
  auto p =
      *net.addOp("example::circ_pad_plugin", {x}, {{"pads", std::vector<int32_t>{2, 1}}}, "pad");
  TensorValue w;
  w.desc = TensorDesc{DataType::kFloat32, {2, 9}};
  w.data.assign(w.desc.bytes(), 0);
  for (int i = 0; i < 18; ++i) reinterpret_cast<float*>(w.data.data())[i] = static_cast<float>(i);
  auto c = *net.addConstant("w", w);
  auto s = *net.addOp("ai.onnx::Add", {p[0], c}, {}, "add");
  EXPECT_TRUE(net.markOutput(s[0], "y").isOk());
  Builder b(test::contribRegistry());
  auto plan = b.buildSerializedNetwork(net, {});
  EXPECT_TRUE(plan.isOk()) << plan.status().message();
  return *plan;
}
std::string write(const std::string& name, const std::vector<uint8_t>& bytes) {
  std::string path = test::testDir() + "/" + name;
  EXPECT_TRUE(writeFileAtomic(path, bytes).isOk());
  return path;
}
Status load(const std::vector<uint8_t>& bytes,
            std::shared_ptr<Registry> reg = test::contribRegistry()) {
  return Engine::loadFile(write("t.plan", bytes), reg).status();
}
}  // namespace

TEST(Plan, RoundTripsThroughAFile) {
  auto bytes = padPlan();
  auto e = Engine::loadFile(write("good.plan", bytes), test::contribRegistry());
  ASSERT_TRUE(e.isOk()) << e.status().message();
  auto ctx = std::move((*e)->createExecutionContext()).value();
  std::vector<float> in = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11};
  ASSERT_TRUE(ctx->setInput("x", in.data(), 48).isOk());
  ASSERT_TRUE(ctx->execute().isOk());
  Tensor y = *ctx->output("y");
  ASSERT_EQ(y.desc.dims, (std::vector<int64_t>{2, 9}));
  // row 0: pad before 2 -> [4,5,0,1,2,3,4,5,0] + [0..8]
  EXPECT_EQ(y.as<float>()[0], 4.f + 0.f);
  EXPECT_EQ(y.as<float>()[8], 0.f + 8.f);
  EXPECT_EQ(y.as<float>()[9], 10.f + 9.f);
  EXPECT_EQ((*e)->weightBytes(), 72u);
  std::string report = (*e)->inspect();
  EXPECT_NE(report.find("example::circ_pad_plugin v1"), std::string::npos) << report;
  EXPECT_NE(report.find("libopforge_ops.so"), std::string::npos);
}

TEST(Plan, TruncatedFilesAreRefused) {
  auto bytes = padPlan();
  for (size_t keep :
       {size_t{0}, size_t{7}, size_t{40}, size_t{64}, bytes.size() / 2, bytes.size() - 1}) {
    std::vector<uint8_t> cut(bytes.begin(), bytes.begin() + static_cast<long>(keep));
    Status st = load(cut);
    ASSERT_FALSE(st.isOk()) << keep;
    EXPECT_TRUE(st.message().find("truncated") != std::string::npos ||
                st.message().find("empty") != std::string::npos ||
                st.message().find("not an opforge plan") != std::string::npos)
        << keep << ": " << st.message();
  }
}

TEST(Plan, EveryFlippedByteIsDetected) {
  auto bytes = padPlan();
  for (size_t i = 0; i < bytes.size(); i += std::max<size_t>(1, bytes.size() / 97)) {
    auto bad = bytes;
    bad[i] ^= 0x20;
    auto r = Engine::loadMemory(bad, "flipped.plan", test::contribRegistry());
    ASSERT_FALSE(r.isOk()) << "flip at byte " << i << " went unnoticed";
  }
  auto bad = bytes;
  bad[bytes.size() - 3] ^= 1;  // inside the weights
  Status st = load(bad);
  EXPECT_NE(st.message().find("checksum mismatch"), std::string::npos) << st.message();
}

TEST(Plan, NewerFormatVersionNamesBothVersions) {
  auto bytes = padPlan();
  uint32_t v = plan::kFormatVersion + 1;
  std::memcpy(bytes.data() + 8, &v, 4);
  Status st = load(bytes);
  EXPECT_EQ(st.code(), StatusCode::kVersion);
  EXPECT_NE(st.message().find("format version " + std::to_string(v)), std::string::npos)
      << st.message();
  EXPECT_NE(st.message().find("reads version " + std::to_string(plan::kFormatVersion)),
            std::string::npos);
  EXPECT_NE(st.message().find("newer opforge"), std::string::npos);
}

TEST(Plan, OlderFormatVersionAsksForARebuild) {
  // Format 1 plans (before If guards) are refused, not misread.
  auto bytes = padPlan();
  uint32_t v = 1;
  std::memcpy(bytes.data() + 8, &v, 4);
  Status st = load(bytes);
  EXPECT_EQ(st.code(), StatusCode::kVersion);
  EXPECT_NE(st.message().find("plan format version 1"), std::string::npos) << st.message();
  EXPECT_NE(st.message().find("Rebuild the plan"), std::string::npos) << st.message();
}

TEST(Plan, NotAPlan) {
  std::string text = "this is not a plan file at all, just words";
  Status st = load(std::vector<uint8_t>(text.begin(), text.end()));
  EXPECT_NE(st.message().find("not an opforge plan file"), std::string::npos) << st.message();
  auto missing = Engine::loadFile("/nonexistent/x.plan");
  EXPECT_EQ(missing.status().code(), StatusCode::kNotFound);
}

TEST(Plan, MissingPluginNamesTheOpAndTheFlag) {
  auto bytes = padPlan();
  Status st = load(bytes, Registry::create());  // built-ins only
  EXPECT_EQ(st.code(), StatusCode::kNotFound);
  EXPECT_NE(st.message().find("example::circ_pad_plugin v1"), std::string::npos) << st.message();
  EXPECT_NE(st.message().find("node 'pad'"), std::string::npos);
  EXPECT_NE(st.message().find("libopforge_ops.so"), std::string::npos);
  EXPECT_NE(st.message().find("--plugins="), std::string::npos);
}

TEST(Plan, UnwritablePathLeavesNothing) {
  Status st = writeFileAtomic("/nonexistent-dir/x.plan", {1, 2, 3});
  EXPECT_EQ(st.code(), StatusCode::kIo);
  EXPECT_NE(st.message().find("/nonexistent-dir/x.plan"), std::string::npos);
  struct stat sb;
  EXPECT_NE(::stat("/nonexistent-dir/x.plan", &sb), 0);
}

// ---- Plans edited with their checksum recomputed (issue 21): the validation behind it holds. --

namespace {
// Decodes a good plan, lets `edit` change it, and encodes it again (a fresh checksum).
std::vector<uint8_t> tampered(const std::vector<uint8_t>& good,
                              const std::function<void(plan::Plan&)>& edit) {
  const uint8_t* w = nullptr;
  size_t wsize = 0;
  auto p = plan::deserialize(good.data(), good.size(), "good.plan", &w, &wsize);
  EXPECT_TRUE(p.isOk()) << p.status().message();
  std::vector<uint8_t> weights(w, w + wsize);
  edit(*p);
  return plan::serialize(*p, weights);
}
Status loadBytes(const std::vector<uint8_t>& bytes) {
  return Engine::loadMemory(bytes, "edited.plan", test::contribRegistry()).status();
}
int tensorNamed(const plan::Plan& p, const std::string& name) {
  for (size_t t = 0; t < p.tensors.size(); ++t)
    if (p.tensors[t].name == name) return static_cast<int>(t);
  return -1;
}
std::vector<uint8_t> dynamicPlan() {
  NetworkDefinition net(test::contribRegistry());
  auto x = *net.addInput("x", DataType::kFloat32, {-1, 6});
  auto r = *net.addOp("ai.onnx::Relu", {x}, {}, "relu");
  EXPECT_TRUE(net.markOutput(r[0], "y").isOk());
  BuilderConfig cfg;
  cfg.profiles.push_back(OptimizationProfile{}.set("x", {1, 6}, {2, 6}, {4, 6}));
  auto plan = Builder(test::contribRegistry()).buildSerializedNetwork(net, cfg);
  EXPECT_TRUE(plan.isOk()) << plan.status().message();
  return *plan;
}
void expectRefused(const std::vector<uint8_t>& bytes, const std::string& part) {
  Status st = loadBytes(bytes);
  ASSERT_FALSE(st.isOk()) << "expected an error with '" << part << "'";
  EXPECT_NE(st.message().find(part), std::string::npos) << st.message();
  EXPECT_NE(st.message().find("edited.plan"), std::string::npos) << st.message();
}
}  // namespace

TEST(Plan, EditedHeaderOffsetsCannotWrap) {
  auto bytes = padPlan();
  uint64_t huge = ~uint64_t{0} - 15;  // meta_offset + meta_size wraps past 2^64
  std::memcpy(bytes.data() + offsetof(plan::Header, meta_offset), &huge, 8);
  expectRefused(bytes, "header is inconsistent");
}

TEST(Plan, EditedWeightsOffsetMustStayAligned) {
  // A weights section at an odd offset made every constant a misaligned typed array (the plan
  // fuzzer: a misaligned float load in Mul's reference, an int64 one in Gather's).
  auto bytes = padPlan();
  uint64_t off = 0;
  std::memcpy(&off, bytes.data() + offsetof(plan::Header, weights_offset), 8);
  off -= 7;
  std::memcpy(bytes.data() + offsetof(plan::Header, weights_offset), &off, 8);
  expectRefused(bytes, "header is inconsistent");
}

// A symbolic dimension edited into another expression passes the load (the rule's x.0 and the
// plan's x.0 + 1 are not compared as numbers); the context re-runs each node's shape rule at the
// concrete shapes before it plans memory, so no kernel reads 4 rows of a 3-row input.
TEST(Plan, EditedSymbolicDimsAreCheckedAtTheShapesTheyRunAt) {
  const auto bad = tampered(dynamicPlan(), [](plan::Plan& p) {
    auto& d = p.tensors[tensorNamed(p, "y")].dims[0];
    d = d + DimExpr(1);
  });
  auto e = Engine::loadMemory(bad, "edited.plan", test::contribRegistry());
  ASSERT_TRUE(e.isOk()) << e.status().message();
  auto ctx = std::move((*e)->createExecutionContext()).value();
  ASSERT_TRUE(ctx->setInputShape("x", {3, 6}).isOk());
  std::vector<float> zeros(18, 0.f);
  // setInput plans memory (the input's staging buffer), so it is the first to see the shapes.
  Status st = ctx->setInput("x", zeros.data(), zeros.size() * sizeof(float));
  if (st.isOk()) st = ctx->execute();
  ASSERT_FALSE(st.isOk());
  for (const char* part : {"edited.plan", "node 'relu'", "at these input shapes",
                           "output 0 ('y') is FP32[4, 6]", "shape rule gives FP32[3, 6]"})
    EXPECT_NE(st.message().find(part), std::string::npos) << part << ": " << st.message();
}

TEST(Plan, EditedConstantsAreCheckedAgainstTheirBytes) {
  const auto good = padPlan();
  ASSERT_TRUE(loadBytes(tampered(good, [](plan::Plan&) {})).isOk());  // re-encoding is harmless
  expectRefused(tampered(good,
                         [](plan::Plan& p) {
                           p.tensors[tensorNamed(p, "w")].weight_offset = ~uint64_t{0} - 7;
                         }),
                "lie outside the weights section");
  expectRefused(
      tampered(good,
               [](plan::Plan& p) { p.tensors[tensorNamed(p, "w")].weight_bytes = ~uint64_t{0}; }),
      "tensor 'w'");
  expectRefused(tampered(good, [](plan::Plan& p) { p.tensors[tensorNamed(p, "w")].dims[0] = 3; }),
                "needs 108 bytes but holds 72");
}

TEST(Plan, EditedNodesAndTensorsAreRefused) {
  const auto good = padPlan();
  // Dropping an input changes the storage lifetimes too; the lifetime check sees it first.
  expectRefused(tampered(good, [](plan::Plan& p) { p.nodes.back().inputs[0] = -1; }),
                "tampered or damaged plan");
  expectRefused(tampered(good, [](plan::Plan& p) { p.nodes.back().inputs[0] = 999; }),
                "has the index 999");
  expectRefused(tampered(good, [](plan::Plan& p) { p.nodes.back().outputs[0] = -1; }),
                "has the index -1");
  // An activation relabelled as a constant would be written into the read-only mapping.
  expectRefused(tampered(good,
                         [](plan::Plan& p) {
                           p.tensors[tensorNamed(p, "y")].kind = plan::TensorKind::kConstant;
                         }),
                "tensor 'y'");
  expectRefused(
      tampered(good,
               [](plan::Plan& p) { p.tensors[tensorNamed(p, "y")].dtype = DataType::kInt32; }),
      "FP32, FP32, INT32, which no type combination of the op");
  // An input's type: the kernel would read the FP32 weights as INT64 (plan fuzzer).
  expectRefused(
      tampered(good,
               [](plan::Plan& p) { p.tensors[tensorNamed(p, "x")].dtype = DataType::kInt64; }),
      "its tensors are INT64");
  expectRefused(tampered(good, [](plan::Plan& p) { p.tensors[tensorNamed(p, "y")].dims[1] = 100; }),
                "shape rule gives");
  expectRefused(tampered(good,
                         [](plan::Plan& p) {
                           p.tensors[tensorNamed(p, "y")].format = static_cast<Format>(5);
                         }),
                "unknown format 5");
  expectRefused(tampered(good, [](plan::Plan& p) { p.backend = 7; }), "unknown backend 7");
  expectRefused(tampered(good, [](plan::Plan& p) { p.nodes[0].backend = -2; }),
                "unknown backend -2");
  expectRefused(tampered(good, [](plan::Plan& p) { p.nodes[1].backend = 1; }),
                "runs on the CPU but the node says backend 1");
  expectRefused(tampered(good, [](plan::Plan& p) { std::swap(p.nodes[0], p.nodes[1]); }),
                "not written by any earlier node");
  expectRefused(
      tampered(good, [](plan::Plan& p) { p.storages[0].first = p.storages[0].first == 5 ? 6 : 5; }),
      "differs from the node order");
}

// A value input computed at run time (here: the network's input wired in as Pad's pads) leaves the
// shape rule without its values at load; the output types are still checked, with zeros in their
// place (a plan fuzzer finding: an FP32 output of an INT64 Pad).
TEST(Plan, EditedTypesBehindRunTimeValuesAreRefused) {
  NetworkDefinition net(Registry::global());
  auto x = *net.addInput("x", DataType::kInt64, {1, 4});
  auto pads = *net.addConstant("pads", test::fromInt64s({4}, {0, 1, 0, 1}));
  auto y = net.addOp("ai.onnx::Pad", {x, pads}, {}, "pad");
  ASSERT_TRUE(y.isOk()) << y.status().message();
  ASSERT_TRUE(net.markOutput((*y)[0], "y").isOk());
  Builder b(Registry::global());
  BuilderConfig cfg;
  cfg.constant_folding =
      false;  // keep the pads an input (pad_constant_params makes them attributes)
  auto good = b.buildSerializedNetwork(net, cfg);
  ASSERT_TRUE(good.isOk()) << good.status().message();
  auto wire_x_as_pads = [](plan::Plan& p) {
    for (auto& n : p.nodes)
      if (n.name == "pad") {
        ASSERT_GE(n.inputs.size(), 2u);
        n.inputs[1] = tensorNamed(p, "x");
      }
  };
  // Pads from run-time data, types intact: the rule cannot run at load, the plan loads.
  ASSERT_TRUE(
      Engine::loadMemory(tampered(*good, wire_x_as_pads), "run-time-pads.plan", Registry::global())
          .isOk());
  auto bad = tampered(*good, [&](plan::Plan& p) {
    wire_x_as_pads(p);
    p.tensors[tensorNamed(p, "y")].dtype = DataType::kFloat32;
  });
  auto e = Engine::loadMemory(bad, "retyped.plan", Registry::global());
  ASSERT_FALSE(e.isOk());
  for (const char* part :
       {"retyped.plan", "pad", "output 0 ('y') is FP32", "the op's shape rule gives INT64"})
    EXPECT_NE(e.status().message().find(part), std::string::npos)
        << part << ": " << e.status().message();
}

TEST(Plan, EditedGuardsAreRefused) {
  // If guards (plan format 2): a guard names a BOOL tensor written before its node and alive there.
  const auto good = padPlan();
  expectRefused(tampered(good,
                         [](plan::Plan& p) {
                           p.nodes.back().guards.push_back({999, true});
                         }),
                "guard tensor index 999 is out of range");
  expectRefused(tampered(good,
                         [](plan::Plan& p) {
                           p.nodes.back().guards.push_back({tensorNamed(p, "x"), true});
                         }),
                "guard tensor 'x' is FP32, not BOOL");
  expectRefused(tampered(good,
                         [](plan::Plan& p) {
                           // A BOOL tensor that only the guarded node itself writes.
                           const int y = tensorNamed(p, "y");
                           p.tensors[y].dtype = DataType::kBool;
                           p.nodes.back().guards.push_back({y, false});
                         }),
                "guard tensor 'y' is not written by any earlier node");
}

TEST(Plan, EditedProfilesAndInputSymbolsAreRefused) {
  const auto good = dynamicPlan();
  ASSERT_TRUE(loadBytes(tampered(good, [](plan::Plan&) {})).isOk());
  expectRefused(tampered(good, [](plan::Plan& p) { p.profiles.clear(); }),
                "no optimization profile");
  expectRefused(tampered(good, [](plan::Plan& p) { p.profiles[0][0].min[0] = -1; }),
                "has min, opt, max -1");
  expectRefused(tampered(good, [](plan::Plan& p) { p.profiles[0][0].max[0] = int64_t{1} << 62; }),
                "more than 2^40 elements");
  expectRefused(tampered(good, [](plan::Plan& p) { p.profiles[0][0].max[1] = 7; }),
                "is fixed at 6");
  expectRefused(
      tampered(good, [](plan::Plan& p) { p.input_symbols[0].second.first = tensorNamed(p, "y"); }),
      "which is not an input");
  expectRefused(tampered(good,
                         [](plan::Plan& p) {
                           p.input_symbols[0].second.second = std::numeric_limits<int32_t>::min();
                         }),
                "names axis -2147483648");
  expectRefused(tampered(good, [](plan::Plan& p) { p.input_symbols.clear(); }),
                "is not a bound input symbol");
}

TEST(Plan, EditedAttributesAreRecheckedAtLoad) {
  // Conv -> Relu becomes one opforge::FusedConv; group=0 in the plan used to end in SIGFPE.
  NetworkDefinition net(test::contribRegistry());
  auto x = *net.addInput("x", DataType::kFloat32, {1, 2, 5, 5});
  TensorValue w;
  w.desc = TensorDesc{DataType::kFloat32, {2, 2, 3, 3}};
  w.data.assign(w.desc.bytes(), 0);
  auto wc = *net.addConstant("w", w);
  auto c = *net.addOp("ai.onnx::Conv", {x, wc}, {}, "conv");
  auto r = *net.addOp("ai.onnx::Relu", {c[0]}, {}, "relu");
  ASSERT_TRUE(net.markOutput(r[0], "y").isOk());
  auto good = Builder(test::contribRegistry()).buildSerializedNetwork(net, {});
  ASSERT_TRUE(good.isOk()) << good.status().message();
  bool found = false;
  auto bytes = tampered(*good, [&](plan::Plan& p) {
    for (auto& n : p.nodes)
      if (n.attrs.has("group")) {
        n.attrs.set("group", AttrValue(int64_t{0}));
        found = true;
      }
  });
  ASSERT_TRUE(found);
  expectRefused(bytes, "attribute 'group' must be >= 1, got 0");
}

TEST(Plan, ShapeInputsDroppedByTheBuilderStillLoad) {
  // Reshape(x, Shape(x)) on a dynamic batch: the shape_inputs pass drops the Reshape's shape
  // input (its kernel never reads it); the loader accepts the omitted required input there.
  NetworkDefinition net(test::contribRegistry());
  auto x = *net.addInput("x", DataType::kFloat32, {-1, 6});
  auto s = *net.addOp("ai.onnx::Shape", {x}, {}, "shape");
  auto r = *net.addOp("ai.onnx::Reshape", {x, s[0]}, {}, "reshape");
  ASSERT_TRUE(net.markOutput(r[0], "y").isOk());
  BuilderConfig cfg;
  cfg.profiles.push_back(OptimizationProfile{}.set("x", {1, 6}, {2, 6}, {4, 6}));
  auto plan = Builder(test::contribRegistry()).buildSerializedNetwork(net, cfg);
  ASSERT_TRUE(plan.isOk()) << plan.status().message();
  Status st = loadBytes(*plan);
  EXPECT_TRUE(st.isOk()) << st.message();
}

// ---- Integer attributes edited to 2^40 (issue 21: such a plan, checksum fixed, hung at run
// time). Each one-node plan below, every integer attribute of every node in turn (scalars, and
// every element of a list): the plan is refused at load with a message naming it, or it runs to
// an end (outputs or an error) in bounded time. A loop count that no shape bounds must have a
// maximum of its own.

namespace {
struct OneNode {
  std::string key;
  std::vector<std::pair<DataType, std::vector<int64_t>>> inputs;  // network inputs, zeros at run
  std::vector<TensorValue> constants;                             // then constant inputs
  Attrs attrs;
};
std::vector<uint8_t> oneNodePlan(const OneNode& c) {
  NetworkDefinition net(test::contribRegistry());
  std::vector<TensorRef> ins;
  for (size_t i = 0; i < c.inputs.size(); ++i)
    ins.push_back(*net.addInput("in" + std::to_string(i), c.inputs[i].first, c.inputs[i].second));
  for (size_t i = 0; i < c.constants.size(); ++i)
    ins.push_back(*net.addConstant("const" + std::to_string(i), c.constants[i]));
  auto outs = net.addOp(c.key, ins, c.attrs, "node");
  EXPECT_TRUE(outs.isOk()) << c.key << ": " << outs.status().message();
  if (!outs) return {};
  for (size_t o = 0; o < outs->size(); ++o)
    EXPECT_TRUE(net.markOutput((*outs)[o], "out" + std::to_string(o)).isOk());
  auto plan = Builder(test::contribRegistry()).buildSerializedNetwork(net, {});
  EXPECT_TRUE(plan.isOk()) << c.key << ": " << plan.status().message();
  return plan ? *plan : std::vector<uint8_t>{};
}
// Loads the plan; when it loads, runs it once on zero inputs. The time it took to load and run.
double loadAndRun(const std::vector<uint8_t>& bytes, const std::string& what) {
  const auto t0 = std::chrono::steady_clock::now();
  auto e = Engine::loadMemory(bytes, "edited.plan", test::contribRegistry());
  if (!e) {
    EXPECT_NE(e.status().message().find("edited.plan"), std::string::npos)
        << what << ": " << e.status().message();
  } else {
    auto ctx = (*e)->createExecutionContext();
    EXPECT_TRUE(ctx.isOk()) << what;
    if (ctx) {
      (*ctx)->setMemoryLimit(uint64_t{1} << 30);
      Status st;
      for (const IOTensorInfo& io : (*e)->ioTensors()) {
        if (!io.is_input || !st) continue;
        std::vector<uint8_t> zeros(static_cast<size_t>(TensorDesc{io.dtype, io.dims}.bytes()));
        st = (*ctx)->setInput(io.name, zeros.data(), zeros.size());
      }
      if (st) st = (*ctx)->execute();
      EXPECT_TRUE(st.isOk() || !st.message().empty()) << what;
    }
  }
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}
}  // namespace

TEST(Plan, IntegerAttributesEditedTo2Pow40AreRefusedOrRunBounded) {
  constexpr int64_t kHuge = int64_t{1} << 40;
  const DataType f = DataType::kFloat32, i64 = DataType::kInt64;
  TensorValue w;
  w.desc = TensorDesc{f, {2, 2, 3, 3}};
  w.data.assign(w.desc.bytes(), 0);
  using V = std::vector<int64_t>;
  const std::vector<OneNode> cases = {
      {"ai.onnx::Conv",
       {{f, {1, 2, 5, 5}}},
       {w},
       {{"strides", V{1, 1}},
        {"pads", V{1, 1, 1, 1}},
        {"dilations", V{1, 1}},
        {"group", int64_t{1}}}},
      {"ai.onnx::MaxPool",
       {{f, {1, 1, 5, 5}}},
       {},
       {{"kernel_shape", V{2, 2}},
        {"strides", V{1, 1}},
        {"pads", V{0, 0, 1, 1}},
        {"dilations", V{1, 1}},
        {"ceil_mode", int64_t{0}},
        {"storage_order", int64_t{0}}}},
      {"ai.onnx::AveragePool",
       {{f, {1, 1, 5, 5}}},
       {},
       {{"kernel_shape", V{3, 3}}, {"pads", V{1, 1, 1, 1}}, {"count_include_pad", int64_t{1}}}},
      {"ai.onnx::LpPool", {{f, {1, 1, 4, 4}}}, {}, {{"kernel_shape", V{2, 2}}, {"p", int64_t{2}}}},
      {"ai.onnx::Gemm",
       {{f, {2, 3}}, {f, {4, 3}}},
       {},
       {{"transA", int64_t{0}}, {"transB", int64_t{1}}}},
      {"ai.onnx::RoiAlign",
       {{f, {1, 1, 4, 4}}, {f, {1, 4}}, {i64, {1}}},
       {},
       {{"sampling_ratio", int64_t{2}},
        {"output_height", int64_t{2}},
        {"output_width", int64_t{2}}}},
      {"ai.onnx::LRN", {{f, {1, 3, 2, 2}}}, {}, {{"size", int64_t{3}}}},
      {"ai.onnx::Softmax", {{f, {2, 3}}}, {}, {{"axis", int64_t{-1}}}},
      {"ai.onnx::Flatten", {{f, {2, 3, 4}}}, {}, {{"axis", int64_t{1}}}},
      {"ai.onnx::Concat", {{f, {2, 3}}, {f, {2, 3}}}, {}, {{"axis", int64_t{0}}}},
      {"ai.onnx::Gather", {{f, {2, 5}}, {i64, {3}}}, {}, {{"axis", int64_t{1}}}},
      {"ai.onnx::GatherND", {{f, {2, 3, 4}}, {i64, {2, 1}}}, {}, {{"batch_dims", int64_t{1}}}},
      {"ai.onnx::ArgMax",
       {{f, {2, 5}}},
       {},
       {{"axis", int64_t{1}}, {"keepdims", int64_t{1}}, {"select_last_index", int64_t{0}}}},
      {"ai.onnx::DepthToSpace", {{f, {1, 4, 2, 2}}}, {}, {{"blocksize", int64_t{2}}}},
      {"ai.onnx::GroupNormalization",
       {{f, {1, 4, 2, 2}}, {f, {4}}, {f, {4}}},
       {},
       {{"num_groups", int64_t{2}}}},
      {"ai.onnx::Transpose", {{f, {2, 3, 4}}}, {}, {{"perm", V{2, 0, 1}}}},
      {"ai.onnx::CumSum",
       {{f, {2, 5}}},
       {test::fromInt64s({}, {1})},
       {{"exclusive", int64_t{0}}, {"reverse", int64_t{1}}}},
      {"example::circ_pad_plugin",
       {{f, {1, 3, 4, 4}}},
       {},
       {{"pads", std::vector<int32_t>{1, 1, 2, 2}}}},
  };
  int edits = 0, refused = 0;
  for (const OneNode& c : cases) {
    const auto good = oneNodePlan(c);
    if (good.empty()) continue;
    ASSERT_LT(loadAndRun(good, c.key), 10.0) << c.key << " (unedited)";
    const uint8_t* wp = nullptr;
    size_t ws = 0;
    auto p = plan::deserialize(good.data(), good.size(), "good.plan", &wp, &ws);
    ASSERT_TRUE(p.isOk()) << p.status().message();
    for (size_t k = 0; k < p->nodes.size(); ++k)
      for (const auto& [name, value] : p->nodes[k].attrs.all()) {
        size_t n = 1;
        if (const auto* v = std::get_if<std::vector<int64_t>>(&value))
          n = v->size();
        else if (const auto* v32 = std::get_if<std::vector<int32_t>>(&value))
          n = v32->size();
        else if (!std::holds_alternative<int64_t>(value))
          continue;
        for (size_t e = 0; e < n; ++e) {
          const auto bytes = tampered(good, [&, name = name](plan::Plan& q) {
            AttrValue v = q.nodes[k].attrs.all().at(name);
            if (auto* l = std::get_if<std::vector<int64_t>>(&v))
              (*l)[e] = kHuge;
            else if (auto* l32 = std::get_if<std::vector<int32_t>>(&v))
              (*l32)[e] = std::numeric_limits<int32_t>::max();  // an int32 list's largest
            else
              v = kHuge;
            q.nodes[k].attrs.set(name, v);
          });
          const std::string what = c.key + " attribute '" + name + "'[" + std::to_string(e) + "]";
          refused += !Engine::loadMemory(bytes, "edited.plan", test::contribRegistry()).isOk();
          ++edits;
          EXPECT_LT(loadAndRun(bytes, what), 10.0) << what;
        }
      }
  }
  EXPECT_GT(edits, 40);
  EXPECT_GT(refused, edits / 2) << refused << " of " << edits << " edits refused";
}

// Nodes whose shape rule a loaded plan cannot re-run (the builder dropped their shape-time input:
// Split's sizes and TopK's K computed from a dynamic dimension) check their axis in the
// kernel: an axis edited outside the rank is an error naming the attribute when the layer runs,
// never a read past the dims.
TEST(Plan, EditedAxesAreCheckedWhereTheShapeRuleIsNotReRun) {
  for (const std::string key : {"ai.onnx::Split", "ai.onnx::TopK", "ai.onnx::Gather"}) {
    NetworkDefinition net(test::contribRegistry());
    auto x = *net.addInput("x", DataType::kFloat32, {-1, 6});
    // [N]: Split's sizes / TopK's K / Gather's indices along axis 0, known at build time only
    // symbolically.
    auto s =
        *net.addOp("ai.onnx::Shape", {x}, {{"start", int64_t{0}}, {"end", int64_t{1}}}, "shape");
    Attrs attrs{{"axis", int64_t{0}}};
    if (key == "ai.onnx::TopK") attrs["largest"] = int64_t{1}, attrs["sorted"] = int64_t{1};
    auto y = net.addOp(key, {x, s[0]}, attrs, "node");
    ASSERT_TRUE(y.isOk()) << key << ": " << y.status().message();
    for (size_t o = 0; o < y->size(); ++o)
      ASSERT_TRUE(net.markOutput((*y)[o], "y" + std::to_string(o)).isOk());
    BuilderConfig cfg;
    cfg.profiles.push_back(OptimizationProfile{}.set("x", {1, 6}, {2, 6}, {4, 6}));
    auto good = Builder(test::contribRegistry()).buildSerializedNetwork(net, cfg);
    ASSERT_TRUE(good.isOk()) << key << ": " << good.status().message();
    for (int64_t axis : {int64_t{2}, int64_t{5}, int64_t{-3}, int64_t{1} << 40}) {
      const auto bad = tampered(*good, [&](plan::Plan& p) {
        for (auto& n : p.nodes)
          if (n.attrs.has("axis")) n.attrs.set("axis", axis);
      });
      const std::string what = key + " with axis " + std::to_string(axis);
      // The plan loads (its shape rule is not re-run); the kernel refuses the axis.
      auto e = Engine::loadMemory(bad, "edited.plan", test::contribRegistry());
      ASSERT_TRUE(e.isOk()) << what << ": " << e.status().message();
      auto ctx = std::move((*e)->createExecutionContext()).value();
      ASSERT_TRUE(ctx->setInputShape("x", {3, 6}).isOk()) << what;
      std::vector<float> zeros(18, 0.f);
      ASSERT_TRUE(ctx->setInput("x", zeros.data(), zeros.size() * sizeof(float)).isOk()) << what;
      Status st = ctx->execute();
      ASSERT_FALSE(st.isOk()) << what << " ran";
      EXPECT_NE(st.message().find("attribute 'axis' is " + std::to_string(axis)), std::string::npos)
          << what << ": " << st.message();
    }
  }
}
