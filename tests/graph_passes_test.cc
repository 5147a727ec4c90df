// The builder's graph passes: each has its own order number, and a verbose build lists the passes
// it ran, in order.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <functional>
#include <set>

#include "builder/build_state.h"
#include "graph/passes.h"
#include "opforge/builder.h"
#include "opforge/network.h"
#include "opforge/registry.h"
#include "opforge/runtime.h"

using namespace opforge;

namespace {
// The log lines of building a one-Relu network, verbose or not.
std::vector<std::string> buildLog(bool verbose) {
  auto reg = Registry::create();
  NetworkDefinition net(reg);
  auto x = *net.addInput("x", DataType::kFloat32, {2, 3});
  auto r = *net.addOp("ai.onnx::Relu", {x}, {}, "relu");
  EXPECT_TRUE(net.markOutput(r[0], "y").isOk());
  std::vector<std::string> logs;
  BuilderConfig cfg;
  cfg.verbose = verbose;
  cfg.log = [&](const std::string& m) { logs.push_back(m); };
  Status st = Builder(reg).buildSerializedNetwork(net, cfg).status();
  EXPECT_TRUE(st.isOk()) << st.message();
  return logs;
}
// A 1-D INT64 constant.
TensorValue ints(std::vector<int64_t> v) {
  TensorValue t;
  t.desc = TensorDesc{DataType::kInt64, {static_cast<int64_t>(v.size())}};
  t.data.resize(v.size() * 8);
  std::memcpy(t.data.data(), v.data(), t.data.size());
  return t;
}

// Whether a build log line holds `text` (the build's summary counts what each pass did).
bool logged(const std::vector<std::string>& logs, const std::string& text) {
  for (const auto& l : logs)
    if (l.find(text) != l.npos) return true;
  return false;
}

// Builds `network` (input "x", FP32) with the optimization switch on or off, runs it on xs and
// returns the FP32 outputs `names`, concatenated; the build's log lines go to *logs.
std::vector<float> buildAndRun(const std::shared_ptr<Registry>& reg,
                               const std::function<void(NetworkDefinition&)>& network,
                               bool optimize, const std::vector<float>& xs,
                               std::initializer_list<const char*> names,
                               std::vector<std::string>* logs) {
  NetworkDefinition net(reg);
  network(net);
  BuilderConfig cfg;
  cfg.constant_folding = optimize;
  if (logs) cfg.log = [logs](const std::string& l) { logs->push_back(l); };
  auto plan = Builder(reg).buildSerializedNetwork(net, cfg);
  EXPECT_TRUE(plan.isOk()) << plan.status().message();
  if (!plan) return {};
  auto e = std::move(Engine::loadMemory(std::move(*plan), "passes.plan", reg)).value();
  auto ctx = std::move(e->createExecutionContext()).value();
  EXPECT_TRUE(ctx->setInput("x", xs.data(), xs.size() * 4).isOk());
  EXPECT_TRUE(ctx->execute().isOk());
  std::vector<float> out;
  for (const char* name : names) {
    Tensor t = *ctx->output(name);
    out.insert(out.end(), t.as<float>(), t.as<float>() + t.numel());
  }
  return out;
}
}  // namespace

TEST(GraphPasses, EveryPassHasItsOwnOrderNumber) {
  const auto passes = graph::registeredPasses();
  ASSERT_FALSE(passes.empty());
  std::set<std::string> names;
  for (size_t i = 0; i < passes.size(); ++i) {
    names.insert(passes[i].name);
    if (i > 0) {
      EXPECT_LT(passes[i - 1].order, passes[i].order)
          << passes[i - 1].name << " and " << passes[i].name << " share an order number";
    }
  }
  EXPECT_EQ(names.size(), passes.size()) << "a pass name is registered twice";
  // The documented order of the fusions that depend on each other (docs/architecture.md).
  auto order = [&](const std::string& n) {
    for (const auto& p : passes)
      if (p.name == n) return p.order;
    ADD_FAILURE() << "no pass " << n;
    return -1;
  };
  EXPECT_LT(order("constant_folding"), order("batchnorm_into_conv"));
  EXPECT_LT(order("batchnorm_into_conv"), order("gelu_fusion"));
  EXPECT_LT(order("gelu_fusion"), order("conv_fusion"));
  EXPECT_LT(order("conv_fusion"), order("gemm_fusion"));
  EXPECT_LT(order("shape_inputs"), order("dead_nodes"));
  EXPECT_LT(order("dead_nodes"), order("reshape_alias"));
}

TEST(GraphPasses, AVerboseBuildListsThePassesItRan) {
  std::vector<std::string> logs = buildLog(true);
  ASSERT_FALSE(logs.empty());
  std::string listed;
  for (const auto& l : logs)
    if (l.rfind("graph passes run, in order: ", 0) == 0) listed = l;
  ASSERT_FALSE(listed.empty()) << "no pass list in the verbose log";
  size_t at = 0;
  for (const auto& p : graph::registeredPasses()) {
    const std::string item = p.name + " (" + std::to_string(p.order) + ")";
    const size_t pos = listed.find(item, at);
    EXPECT_NE(pos, std::string::npos) << item << " missing or out of order in: " << listed;
    if (pos != std::string::npos) at = pos + item.size();
  }
  // Not verbose: no list.
  logs = buildLog(false);
  for (const auto& l : logs) EXPECT_EQ(l.rfind("graph passes run", 0), std::string::npos) << l;
}

// The late rewrites that need the chosen formats are passes of their own phase, numbered and
// listed the same way (src/builder/build_state.h).
TEST(GraphPasses, AVerboseBuildListsThePostFormatPasses) {
  const auto passes = build::postFormatPasses();
  std::vector<std::string> names;
  for (size_t i = 0; i < passes.size(); ++i) {
    names.push_back(passes[i].name);
    if (i > 0) {
      EXPECT_LT(passes[i - 1].order, passes[i].order) << passes[i].name;
    }
  }
  EXPECT_EQ(names, (std::vector<std::string>{"output_formats", "cast_pairs", "constant_reformats",
                                             "alias_copies"}));
  std::vector<std::string> logs = buildLog(true);
  ASSERT_FALSE(logs.empty());
  std::string expected = "post-format passes run, in order: ";
  for (size_t i = 0; i < passes.size(); ++i)
    expected += (i ? ", " : "") + passes[i].name + " (" + std::to_string(passes[i].order) + ")";
  EXPECT_NE(std::find(logs.begin(), logs.end(), expected), logs.end()) << expected;
  logs = buildLog(false);
  for (const auto& l : logs) EXPECT_EQ(l.rfind("post-format passes", 0), std::string::npos) << l;
}

// common_subexpressions: nodes of the same op, attributes and inputs — small constants compared by
// contents — are computed once (BERT's export repeats its attention mask's Where in every layer);
// a node with other constants stays, and the result is that of the unmerged network.
TEST(GraphPasses, EqualNodesAreComputedOnce) {
  auto reg = Registry::global();
  const auto scalar = [](float v) {
    TensorValue t;
    t.desc = TensorDesc{DataType::kFloat32, {}};
    t.data.resize(4);
    std::memcpy(t.data.data(), &v, 4);
    return t;
  };
  const auto network = [&](NetworkDefinition& net) {
    auto m = *net.addInput("m", DataType::kBool, {2, 4});
    auto x = *net.addInput("x", DataType::kFloat32, {2, 4});
    TensorRef acc = x;
    const float lows[] = {-1e4f, -1e4f, -2e4f};  // the third Where differs
    for (int i = 0; i < 3; ++i) {
      const std::string s = std::to_string(i);
      auto zero = *net.addConstant("zero" + s, scalar(0.f));
      auto low = *net.addConstant("low" + s, scalar(lows[i]));
      auto w = *net.addOp("ai.onnx::Where", {m, zero, low}, {}, "where" + s);
      acc = (*net.addOp("ai.onnx::Add", {acc, w[0]}, {}, "add" + s))[0];
    }
    EXPECT_TRUE(net.markOutput(acc, "y").isOk());
  };
  const uint8_t mask[8] = {1, 0, 1, 1, 0, 0, 1, 0};
  std::vector<float> xs(8);
  for (int i = 0; i < 8; ++i) xs[i] = 0.25f * static_cast<float>(i) - 1.f;
  const auto run = [&](bool optimize, std::vector<std::string>* logs) {
    NetworkDefinition net(reg);
    network(net);
    BuilderConfig cfg;
    cfg.constant_folding = optimize;
    cfg.verbose = logs != nullptr;
    if (logs) cfg.log = [logs](const std::string& l) { logs->push_back(l); };
    auto plan = Builder(reg).buildSerializedNetwork(net, cfg);
    EXPECT_TRUE(plan.isOk()) << plan.status().message();
    auto e = std::move(Engine::loadMemory(std::move(*plan), "cse.plan", reg)).value();
    auto ctx = std::move(e->createExecutionContext()).value();
    EXPECT_TRUE(ctx->setInput("m", mask, sizeof(mask)).isOk());
    EXPECT_TRUE(ctx->setInput("x", xs.data(), xs.size() * 4).isOk());
    EXPECT_TRUE(ctx->execute().isOk());
    Tensor y = *ctx->output("y");
    int wheres = 0;
    for (const auto& l : e->layers()) wheres += l.op.rfind("ai.onnx::Where", 0) == 0;
    return std::make_pair(wheres, std::vector<float>(y.as<float>(), y.as<float>() + 8));
  };
  std::vector<std::string> logs;
  const auto [merged_wheres, merged] = run(true, &logs);
  const auto [all_wheres, unmerged] = run(false, nullptr);
  EXPECT_EQ(merged_wheres, 2);
  EXPECT_EQ(all_wheres, 3);
  EXPECT_EQ(merged, unmerged);
  EXPECT_EQ(merged[1], xs[1] - 1e4f - 1e4f - 2e4f);
  EXPECT_NE(std::find(logs.begin(), logs.end(),
                      "common_subexpressions: 1 node(s) merged with an equal earlier one"),
            logs.end());
}

// BuilderConfig::disabled_passes: a disabled pass does not run (the three equal Wheres stay three,
// the verbose list marks it), the others still do (the build still folds), the summary says which
// were off; a name no pass has is an error that names it and lists the passes.
TEST(GraphPasses, DisabledPassesDoNotRunAndUnknownNamesAreErrors) {
  auto reg = Registry::global();
  const auto build = [&](std::vector<std::string> disabled, std::vector<std::string>* logs) {
    NetworkDefinition net(reg);
    auto m = *net.addInput("m", DataType::kBool, {2, 4});
    auto x = *net.addInput("x", DataType::kFloat32, {2, 4});
    TensorValue zero;
    zero.desc = TensorDesc{DataType::kFloat32, {}};
    zero.data.assign(4, 0);
    TensorRef acc = x;
    for (int i = 0; i < 3; ++i) {
      const std::string s = std::to_string(i);
      auto z = *net.addConstant("zero" + s, zero);
      auto w = *net.addOp("ai.onnx::Where", {m, z, x}, {}, "where" + s);
      acc = (*net.addOp("ai.onnx::Add", {acc, w[0]}, {}, "add" + s))[0];
    }
    EXPECT_TRUE(net.markOutput(acc, "y").isOk());
    BuilderConfig cfg;
    cfg.verbose = true;
    cfg.disabled_passes = std::move(disabled);
    cfg.log = [logs](const std::string& l) { logs->push_back(l); };
    return Builder(reg).buildSerializedNetwork(net, cfg);
  };
  const auto wheres = [&](std::vector<uint8_t> plan) {
    auto e = std::move(Engine::loadMemory(std::move(plan), "disabled.plan", reg)).value();
    int n = 0;
    for (const auto& l : e->layers()) n += l.op.rfind("ai.onnx::Where", 0) == 0;
    return n;
  };
  std::vector<std::string> on_logs, off_logs, bad_logs;
  auto on = build({}, &on_logs);
  auto off = build({"common_subexpressions"}, &off_logs);
  ASSERT_TRUE(on.isOk()) << on.status().message();
  ASSERT_TRUE(off.isOk()) << off.status().message();
  EXPECT_EQ(wheres(std::move(*on)), 1);
  EXPECT_EQ(wheres(std::move(*off)), 3);
  EXPECT_TRUE(logged(off_logs, "graph passes disabled: common_subexpressions"));
  EXPECT_FALSE(logged(on_logs, "graph passes disabled"));
  EXPECT_TRUE(logged(off_logs, "common_subexpressions ("));
  EXPECT_TRUE(logged(off_logs, ", disabled)"));
  EXPECT_TRUE(logged(off_logs, "constant_folding ("));
  EXPECT_FALSE(logged(off_logs, "common_subexpressions: "));
  auto bad = build({"common_subexpression"}, &bad_logs);
  ASSERT_FALSE(bad.isOk());
  const std::string msg = bad.status().message();
  EXPECT_NE(msg.find("'common_subexpression'"), msg.npos) << msg;
  EXPECT_NE(msg.find("common_subexpressions"), msg.npos) << msg;
  EXPECT_NE(msg.find("dead_nodes"), msg.npos) << msg;
}

// Add -> LayerNormalization fuses also where the sum is read again after the LayerNormalization
// (a pre-LN residual stream): the fused node writes it as its Sum output; where a reader comes
// before the LayerNormalization, the pair stays unfused. Results equal the unfused build's.
TEST(GraphPasses, AddLayerNormKeepsASumThatIsReadAgain) {
  auto reg = Registry::global();
  const auto network = [&](NetworkDefinition& net, bool reader_first) {
    auto x = *net.addInput("x", DataType::kFloat32, {2, 3, 8});
    auto r = *net.addInput("r", DataType::kFloat32, {2, 3, 8});
    TensorValue sc;
    sc.desc = TensorDesc{DataType::kFloat32, {8}};
    sc.data.resize(32);
    for (int i = 0; i < 8; ++i) {
      const float v = 0.5f + 0.125f * static_cast<float>(i);
      std::memcpy(sc.data.data() + 4 * i, &v, 4);
    }
    auto scale = *net.addConstant("scale", sc);
    auto s = (*net.addOp("ai.onnx::Add", {x, r}, {}, "add"))[0];
    TensorRef z{};
    if (reader_first) z = (*net.addOp("ai.onnx::Mul", {s, s}, {}, "square"))[0];
    auto y = (*net.addOp("ai.onnx::LayerNormalization", {s, scale}, {}, "ln"))[0];
    if (!reader_first) z = (*net.addOp("ai.onnx::Mul", {s, y}, {}, "mix"))[0];
    EXPECT_TRUE(net.markOutput(y, "y").isOk());
    EXPECT_TRUE(net.markOutput(z, "z").isOk());
  };
  std::vector<float> xs(48), rs(48);
  for (int i = 0; i < 48; ++i) {
    xs[i] = 0.37f * static_cast<float>(i % 11) - 1.5f;
    rs[i] = 0.21f * static_cast<float>(i % 7) - 0.4f;
  }
  const auto run = [&](bool optimize, bool reader_first) {
    NetworkDefinition net(reg);
    network(net, reader_first);
    BuilderConfig cfg;
    cfg.constant_folding = optimize;
    auto plan = Builder(reg).buildSerializedNetwork(net, cfg);
    EXPECT_TRUE(plan.isOk()) << plan.status().message();
    auto e = std::move(Engine::loadMemory(std::move(*plan), "addln.plan", reg)).value();
    auto ctx = std::move(e->createExecutionContext()).value();
    EXPECT_TRUE(ctx->setInput("x", xs.data(), 192).isOk());
    EXPECT_TRUE(ctx->setInput("r", rs.data(), 192).isOk());
    EXPECT_TRUE(ctx->execute().isOk());
    int fused = 0, adds = 0;
    for (const auto& l : e->layers()) {
      fused += l.op.rfind("opforge::FusedAddLayerNorm", 0) == 0;
      adds += l.op.rfind("ai.onnx::Add", 0) == 0;
    }
    std::vector<float> out;
    for (const char* name : {"y", "z"}) {
      Tensor t = *ctx->output(name);
      out.insert(out.end(), t.as<float>(), t.as<float>() + 48);
    }
    return std::make_tuple(fused, adds, out);
  };
  const auto [fused, adds, got] = run(true, false);
  EXPECT_EQ(fused, 1);
  EXPECT_EQ(adds, 0);
  EXPECT_EQ(got, std::get<2>(run(false, false)));
  EXPECT_EQ(got[48], (xs[0] + rs[0]) * got[0]);  // z = sum * y
  const auto [fused_first, adds_first, got_first] = run(true, true);
  EXPECT_EQ(fused_first, 0);
  EXPECT_EQ(adds_first, 1);
  EXPECT_EQ(got_first, std::get<2>(run(false, true)));
}

// A Slice with constant starts / ends / axes and unit steps takes them as attributes (its CUDA
// tactic then copies 16-byte units resolved on the host); one with a step of 2 keeps the inputs.
// Results equal the unoptimized build's.
TEST(GraphPasses, ConstantSliceParametersBecomeAttributes) {
  auto reg = Registry::global();
  const auto network = [&](NetworkDefinition& net) {
    auto x = *net.addInput("x", DataType::kFloat32, {2, 6, 8});
    auto starts = *net.addConstant("starts", ints({-4}));
    auto ends = *net.addConstant("ends", ints({INT64_MAX}));
    auto axes = *net.addConstant("axes", ints({1}));
    auto steps = *net.addConstant("steps", ints({2}));
    auto a = (*net.addOp("ai.onnx::Slice", {x, starts, ends, axes}, {}, "tail"))[0];
    auto b = (*net.addOp("ai.onnx::Slice", {x, starts, ends, axes, steps}, {}, "every_other"))[0];
    EXPECT_TRUE(net.markOutput(a, "a").isOk());
    EXPECT_TRUE(net.markOutput(b, "b").isOk());
  };
  std::vector<float> xs(96);
  for (int i = 0; i < 96; ++i) xs[i] = static_cast<float>(i);
  const auto run = [&](bool optimize, std::vector<std::string>* logs) {
    return buildAndRun(reg, network, optimize, xs, {"a", "b"}, logs);
  };
  std::vector<std::string> logs;
  const auto got = run(true, &logs);
  EXPECT_EQ(got, run(false, nullptr));
  ASSERT_EQ(got.size(), size_t{2 * 4 * 8 + 2 * 2 * 8});
  EXPECT_EQ(got[0], 16.f);       // a[0, 0, 0] = x[0, 2, 0]
  EXPECT_EQ(got[64 + 8], 32.f);  // b[0, 1, 0] = x[0, 4, 0]
  EXPECT_TRUE(logged(logs, "1 Slice parameters made attributes"));
}

// A Pad with zero pads and a Slice that keeps every element are dropped (their readers read their
// input); a no-op Pad whose output is a network output stays; Pads that pad take their known pads
// as the attribute (with axes, reflect). Results equal the unoptimized build's.
TEST(GraphPasses, NoOpPadsAndSlicesAreDropped) {
  auto reg = Registry::global();
  const auto network = [&](NetworkDefinition& net) {
    auto x = *net.addInput("x", DataType::kFloat32, {2, 6, 8});
    auto zeros = *net.addConstant("zeros", ints({0, 0, 0, 0, 0, 0}));
    auto some = *net.addConstant("some", ints({0, 1, 0, 0, 2, 0}));
    auto starts = *net.addConstant("starts", ints({0, -100}));
    auto ends = *net.addConstant("ends", ints({INT64_MAX, 8}));
    auto axes = *net.addConstant("axes", ints({1, 2}));
    auto r = (*net.addOp("ai.onnx::Relu", {x}, {}, "relu"))[0];
    auto p0 = (*net.addOp("ai.onnx::Pad", {r, zeros}, {}, "pad_zero"))[0];
    auto s = (*net.addOp("ai.onnx::Slice", {p0, starts, ends, axes}, {}, "slice_all"))[0];
    auto a = (*net.addOp("ai.onnx::Neg", {s}, {}, "neg"))[0];
    auto b = (*net.addOp("ai.onnx::Pad", {a, some}, {}, "pad_some"))[0];
    auto c = (*net.addOp("ai.onnx::Pad", {r, zeros}, {}, "pad_out"))[0];
    // Known pads over some axes, reflect: the attribute form, one begin and end per axis.
    auto two = *net.addConstant("two", ints({1, 2, 3, 1}));
    auto pad_axes = *net.addConstant("pad_axes", ints({-1, 1}));
    auto d = (*net.addOp("ai.onnx::Pad", {x, two, TensorRef{}, pad_axes},
                         {{"mode", AttrValue(std::string("reflect"))}}, "pad_axes"))[0];
    EXPECT_TRUE(net.markOutput(b, "b").isOk());
    EXPECT_TRUE(net.markOutput(c, "c").isOk());
    EXPECT_TRUE(net.markOutput(d, "d").isOk());
  };
  std::vector<float> xs(96);
  for (int i = 0; i < 96; ++i) xs[i] = static_cast<float>(i % 7) - 3.f;
  const auto run = [&](bool optimize, std::vector<std::string>* logs) {
    return buildAndRun(reg, network, optimize, xs, {"b", "c", "d"}, logs);
  };
  std::vector<std::string> logs;
  const auto got = run(true, &logs);
  EXPECT_EQ(got, run(false, nullptr));
  ASSERT_EQ(got.size(), size_t{2 * 9 * 8 + 96 + 2 * 9 * 12});
  EXPECT_EQ(got[0], 0.f);                    // b[0, 0, 0]: the padded row
  EXPECT_EQ(got[8], -std::max(xs[0], 0.f));  // b[0, 1, 0] = -relu(x[0, 0, 0])
  EXPECT_EQ(got[144 + 5], std::max(xs[5], 0.f));
  EXPECT_TRUE(logged(logs, "3 Pad parameters made attributes"))  // pad_out too
      << "pad_some, pad_out or pad_axes kept its pads as inputs";
  EXPECT_TRUE(logged(logs, "1 zero Pads dropped"))
      << "the Pad before the Slice was not dropped (or the network output's was)";
  EXPECT_TRUE(logged(logs, "1 whole-tensor Slices dropped"));
}

// torch.roll as exporters write it (two Slices and a Concat per axis) becomes one opforge::Roll
// (two rolls in a row merge); results equal the unoptimized build's and a direct computation. A
// Concat of the two pieces in their own order (the identity) is left alone. (Slices shared with
// another reader stay Slices: the test keeps the two chains apart.)
TEST(GraphPasses, ExportedRollsBecomeOneRoll) {
  auto reg = Registry::global();
  const int64_t N = 2, H = 5, W = 6, C = 3;
  const auto network = [&](NetworkDefinition& net) {
    auto x = *net.addInput("x", DataType::kFloat32, {N, H, W, C});
    auto c = [&](const char* name, std::vector<int64_t> v) {
      return *net.addConstant(name, ints(std::move(v)));
    };
    auto slice = [&](TensorRef in, TensorRef b, TensorRef e, TensorRef ax, const char* name) {
      return (*net.addOp("ai.onnx::Slice", {in, b, e, ax}, {}, name))[0];
    };
    auto concat = [&](TensorRef a, TensorRef b, int64_t axis, const char* name) {
      return (*net.addOp("ai.onnx::Concat", {a, b}, {{"axis", AttrValue(axis)}}, name))[0];
    };
    auto r = (*net.addOp("ai.onnx::Relu", {x}, {}, "relu"))[0];
    auto zero = c("zero", {0}), two = c("two", {2}), big = c("big", {INT64_MAX});
    auto m1 = c("m1", {-1}), ax1 = c("ax1", {1}), ax2 = c("ax2", {-2});
    // roll by -2 on H: x[:, 2:], x[:, :2]; then by +1 on W: x[:, :, -1:], x[:, :, :-1]
    auto h = concat(slice(r, two, big, ax1, "h_tail"), slice(r, zero, two, ax1, "h_head"), 1, "h");
    auto w = concat(slice(h, m1, big, ax2, "w_tail"), slice(h, zero, m1, ax2, "w_head"), 2, "w");
    auto y = (*net.addOp("ai.onnx::Neg", {w}, {}, "neg"))[0];
    // In order: the identity, not a roll.
    auto same =
        concat(slice(x, zero, two, ax1, "s_head"), slice(x, two, big, ax1, "s_tail"), 1, "same");
    EXPECT_TRUE(net.markOutput(y, "y").isOk());
    EXPECT_TRUE(net.markOutput(same, "same").isOk());
  };
  std::vector<float> xs(N * H * W * C);
  for (size_t i = 0; i < xs.size(); ++i) xs[i] = static_cast<float>(i % 11) - 2.f;
  const auto run = [&](bool optimize, std::vector<std::string>* logs) {
    return buildAndRun(reg, network, optimize, xs, {"y", "same"}, logs);
  };
  std::vector<std::string> logs;
  const auto got = run(true, &logs);
  EXPECT_EQ(got, run(false, nullptr));
  ASSERT_EQ(got.size(), xs.size() * 2);
  for (int64_t n = 0; n < N; ++n)
    for (int64_t i = 0; i < H; ++i)
      for (int64_t j = 0; j < W; ++j)
        for (int64_t k = 0; k < C; ++k) {
          const int64_t si = (i + 2) % H, sj = (j - 1 + W) % W;
          const float want = -std::max(xs[((n * H + si) * W + sj) * C + k], 0.f);
          ASSERT_EQ(got[((n * H + i) * W + j) * C + k], want) << n << " " << i << " " << j;
          ASSERT_EQ(got[xs.size() + ((n * H + i) * W + j) * C + k],
                    xs[((n * H + i) * W + j) * C + k]);
        }
  EXPECT_TRUE(logged(logs, "2 rolls made of Slice + Concat"));
  EXPECT_TRUE(logged(logs, "1 rolls merged"));
}

// Swin's patch merging as exported (four crops of every other row and column, two Slices each with
// the first shared, or one Slice over both axes; concatenated along C) becomes one Transpose
// between two Reshapes, for the crops in column-major (Swin's) and in row-major order; results
// equal the unoptimized build's and a direct computation. Crops in another order stay as they are.
TEST(GraphPasses, PatchMergingBecomesOneTranspose) {
  auto reg = Registry::global();
  const int64_t N = 2, H = 6, W = 4, C = 3;
  const auto network = [&](NetworkDefinition& net) {
    auto x = *net.addInput("x", DataType::kFloat32, {N, H, W, C});
    auto c = [&](const char* name, std::vector<int64_t> v) {
      return *net.addConstant(name, ints(std::move(v)));
    };
    auto slice = [&](TensorRef in, TensorRef b, TensorRef ax, TensorRef st, TensorRef e,
                     const std::string& name) {
      return (*net.addOp("ai.onnx::Slice", {in, b, e, ax, st}, {}, name))[0];
    };
    auto concat4 = [&](std::vector<TensorRef> in, const char* name) {
      return (*net.addOp("ai.onnx::Concat", in, {{"axis", AttrValue(int64_t{-1})}}, name))[0];
    };
    auto r = (*net.addOp("ai.onnx::Relu", {x}, {}, "relu"))[0];
    auto zero = c("zero", {0}), one = c("one", {1}), two = c("two", {2}),
         big = c("big", {INT64_MAX});
    auto ax1 = c("ax1", {1}), ax2 = c("ax2", {2});
    // Swin: x0 = r[:, 0::2, 0::2], x1 = r[:, 1::2, 0::2], x2 = r[:, 0::2, 1::2], x3 = r[:, 1::2,
    // 1::2]
    auto rows0 = slice(r, zero, ax1, two, big, "rows0"),
         rows1 = slice(r, one, ax1, two, big, "rows1");
    auto swin =
        concat4({slice(rows0, zero, ax2, two, big, "x0"), slice(rows1, zero, ax2, two, big, "x1"),
                 slice(rows0, one, ax2, two, big, "x2"), slice(rows1, one, ax2, two, big, "x3")},
                "swin");
    auto y = (*net.addOp("ai.onnx::Neg", {swin}, {}, "neg"))[0];
    // One Slice a crop over both axes, row-major: (0, 0), (0, 1), (1, 0), (1, 1).
    auto both = c("both", {1, 2}), steps = c("steps", {2, 2}),
         ends = c("ends", {INT64_MAX, INT64_MAX});
    std::vector<TensorRef> rm;
    for (int k = 0; k < 4; ++k) {
      auto b = c(("b" + std::to_string(k)).c_str(), {k / 2, k % 2});
      rm.push_back(slice(x, b, both, steps, ends, "rm" + std::to_string(k)));
    }
    auto row_major = concat4(rm, "row_major");
    // Another order (of crops of the Relu, so that no crop is shared with the row-major ones): left
    // alone.
    std::vector<TensorRef> odd;
    for (int k : {0, 3, 1, 2}) {
      auto b = c(("o" + std::to_string(k)).c_str(), {k / 2, k % 2});
      odd.push_back(slice(r, b, both, steps, ends, "odd" + std::to_string(k)));
    }
    auto other = concat4(odd, "other");
    EXPECT_TRUE(net.markOutput(y, "y").isOk());
    EXPECT_TRUE(net.markOutput(row_major, "row_major").isOk());
    EXPECT_TRUE(net.markOutput(other, "other").isOk());
  };
  std::vector<float> xs(N * H * W * C);
  for (size_t i = 0; i < xs.size(); ++i) xs[i] = static_cast<float>(i % 13) - 3.f;
  const auto run = [&](bool optimize, std::vector<std::string>* logs) {
    return buildAndRun(reg, network, optimize, xs, {"y", "row_major", "other"}, logs);
  };
  std::vector<std::string> logs;
  const auto got = run(true, &logs);
  EXPECT_EQ(got, run(false, nullptr));
  ASSERT_EQ(got.size(), xs.size() * 3);
  const auto at = [&](int64_t n, int64_t i, int64_t j, int64_t k) {
    return xs[((n * H + i) * W + j) * C + k];
  };
  const std::array<int, 4> odd_order{0, 3, 1, 2};
  for (int64_t n = 0; n < N; ++n)
    for (int64_t i = 0; i < H / 2; ++i)
      for (int64_t j = 0; j < W / 2; ++j)
        for (int64_t q = 0; q < 4; ++q)
          for (int64_t k = 0; k < C; ++k) {
            const int64_t o = ((n * (H / 2) + i) * (W / 2) + j) * 4 * C + q * C + k;
            // Column-major crops: q = dx * 2 + dy; row-major: q = dy * 2 + dx.
            ASSERT_EQ(got[o], -std::max(at(n, 2 * i + q % 2, 2 * j + q / 2, k), 0.f)) << o;
            ASSERT_EQ(got[xs.size() + o], at(n, 2 * i + q / 2, 2 * j + q % 2, k)) << o;
            const int p = odd_order[q];
            ASSERT_EQ(got[2 * xs.size() + o], std::max(at(n, 2 * i + p / 2, 2 * j + p % 2, k), 0.f))
                << o;
          }
  EXPECT_TRUE(logged(logs, "2 patch mergings made one Transpose"));
}

// opforge::Roll itself: shifts past the size, negative, and an axis named twice (the shifts add).
TEST(GraphPasses, RollShiftsWrapAndAdd) {
  auto reg = Registry::global();
  NetworkDefinition net(reg);
  auto x = *net.addInput("x", DataType::kInt32, {3, 4, 5});
  const Attrs at{{"shifts", AttrValue(std::vector<int64_t>{7, -9, 2})},
                 {"axes", AttrValue(std::vector<int64_t>{0, -1, 2})}};
  auto y = (*net.addOp("opforge::Roll", {x}, at, "roll"))[0];
  ASSERT_TRUE(net.markOutput(y, "y").isOk());
  auto plan = Builder(reg).buildSerializedNetwork(net, BuilderConfig{});
  ASSERT_TRUE(plan.isOk()) << plan.status().message();
  auto e = std::move(Engine::loadMemory(std::move(*plan), "roll.plan", reg)).value();
  auto ctx = std::move(e->createExecutionContext()).value();
  std::vector<int32_t> xs(60);
  for (int i = 0; i < 60; ++i) xs[i] = i * 3 + 1;
  ASSERT_TRUE(ctx->setInput("x", xs.data(), xs.size() * 4).isOk());
  ASSERT_TRUE(ctx->execute().isOk());
  Tensor t = *ctx->output("y");
  // axis 0 by 7 = 1 (mod 3); axis 2 by -9 + 2 = -7 = 3 (mod 5)
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 4; ++j)
      for (int k = 0; k < 5; ++k)
        ASSERT_EQ(t.as<int32_t>()[(i * 4 + j) * 5 + k],
                  xs[(((i + 2) % 3) * 4 + j) * 5 + (k + 2) % 5])
            << i << " " << j << " " << k;
  const Attrs bad{{"shifts", AttrValue(std::vector<int64_t>{1})},
                  {"axes", AttrValue(std::vector<int64_t>{3})}};
  NetworkDefinition net2(reg);
  auto x2 = *net2.addInput("x", DataType::kInt32, {3, 4, 5});
  auto r = net2.addOp("opforge::Roll", {x2}, bad, "bad_roll");
  ASSERT_FALSE(r.isOk());
  EXPECT_NE(r.status().message().find("bad_roll"), std::string::npos) << r.status().message();
  EXPECT_NE(r.status().message().find("3"), std::string::npos) << r.status().message();
}

// A per-channel scale after a GEMM (LayerScale: ConvNeXt's after a Transpose, CaiT's directly;
// a Gemm with transB) is folded into the GEMM's weights and bias: results equal the unoptimized
// build's; a scale that varies along another axis, and one after an activation, stay Muls (as
// does one whose output is a network output: each Mul here feeds a Neg).
TEST(GraphPasses, ColumnScalesFoldIntoGemms) {
  auto reg = Registry::global();
  const auto floats = [](std::vector<int64_t> dims, float seed) {
    TensorValue t;
    t.desc = TensorDesc{DataType::kFloat32, dims};
    const int64_t n = t.desc.numel();
    t.data.resize(n * 4);
    for (int64_t i = 0; i < n; ++i) {
      const float v = std::sin(seed + 0.37f * static_cast<float>(i)) * 1.5f;
      std::memcpy(t.data.data() + i * 4, &v, 4);
    }
    return t;
  };
  const int64_t N = 2, H = 3, W = 4, C = 5, K = 6;
  const auto network = [&](NetworkDefinition& net) {
    auto x = *net.addInput("x", DataType::kFloat32, {N, H, W, K});
    auto c = [&](const char* name, std::vector<int64_t> d, float seed) {
      return *net.addConstant(name, floats(std::move(d), seed));
    };
    auto op = [&](const char* key, std::vector<TensorRef> in, Attrs at, const char* name) {
      return (*net.addOp(key, in, at, name))[0];
    };
    // ConvNeXt: fc2 -> permute to NCHW -> * layer_scale [C, 1, 1]
    auto w1 = c("w1", {K, C}, 0.1f), b1 = c("b1", {C}, 0.2f), g1 = c("g1", {C, 1, 1}, 0.3f);
    auto y1 = op("ai.onnx::Add", {op("ai.onnx::MatMul", {x, w1}, {}, "mm1"), b1}, {}, "add1");
    auto t1 = op("ai.onnx::Transpose", {y1},
                 {{"perm", AttrValue(std::vector<int64_t>{0, 3, 1, 2})}}, "perm1");
    auto o1 = op("ai.onnx::Mul", {g1, t1}, {}, "scale1");
    // CaiT: gamma [C] * proj(x), through a Gemm with transB over a flattened x
    auto xf = op("ai.onnx::Flatten", {x}, {{"axis", AttrValue(int64_t{3})}}, "flat");
    auto w2 = c("w2", {C, K}, 0.4f), b2 = c("b2", {C}, 0.5f), g2 = c("g2", {C}, 0.6f);
    auto y2 = op("ai.onnx::Gemm", {xf, w2, b2}, {{"transB", AttrValue(int64_t{1})}}, "gemm2");
    auto o2 = op("ai.onnx::Mul", {y2, g2}, {}, "scale2");
    // Not folded: a scale along the rows, and one after a ReLU.
    auto w3 = c("w3", {K, C}, 0.7f), b3 = c("b3", {C}, 0.8f), g3 = c("g3", {W, 1}, 0.9f);
    auto y3 = op("ai.onnx::Add", {op("ai.onnx::MatMul", {x, w3}, {}, "mm3"), b3}, {}, "add3");
    auto o3 = op("ai.onnx::Mul", {y3, g3}, {}, "scale3");
    auto y4 = op("ai.onnx::Relu",
                 {op("ai.onnx::Add", {op("ai.onnx::MatMul", {x, w3}, {}, "mm4"), b3}, {}, "add4")},
                 {}, "relu4");
    auto o4 = op("ai.onnx::Mul", {y4, c("g4", {C}, 1.0f)}, {}, "scale4");
    EXPECT_TRUE(net.markOutput(op("ai.onnx::Neg", {o1}, {}, "neg1"), "o1").isOk());
    EXPECT_TRUE(net.markOutput(op("ai.onnx::Neg", {o2}, {}, "neg2"), "o2").isOk());
    EXPECT_TRUE(net.markOutput(op("ai.onnx::Neg", {o3}, {}, "neg3"), "o3").isOk());
    EXPECT_TRUE(net.markOutput(op("ai.onnx::Neg", {o4}, {}, "neg4"), "o4").isOk());
  };
  std::vector<float> xs(N * H * W * K);
  for (size_t i = 0; i < xs.size(); ++i) xs[i] = std::cos(0.13f * static_cast<float>(i));
  const auto run = [&](bool optimize, std::vector<std::string>* logs) {
    return buildAndRun(reg, network, optimize, xs, {"o1", "o2", "o3", "o4"}, logs);
  };
  std::vector<std::string> logs;
  const auto got = run(true, &logs), want = run(false, nullptr);
  ASSERT_EQ(got.size(), want.size());
  ASSERT_EQ(got.size(), size_t{4 * N * H * W * C});
  for (size_t i = 0; i < got.size(); ++i)
    ASSERT_NEAR(got[i], want[i], 1e-5f * (1.f + std::fabs(want[i]))) << "element " << i;
  EXPECT_TRUE(logged(logs, "2 per-channel scales folded into GEMMs"));
}

// A zero Pad of the spatial axes before a Conv becomes the Conv's padding (added to its own);
// results equal the unoptimized build's. A Pad of another value, a Pad of the channels and a
// reflect Pad stay.
TEST(GraphPasses, ZeroPadsFoldIntoConvs) {
  auto reg = Registry::global();
  const auto tensor = [](DataType t, std::vector<int64_t> dims, std::vector<double> v) {
    TensorValue c;
    c.desc = TensorDesc{t, dims};
    c.data.resize(c.desc.numel() * dtypeSize(t));
    for (int64_t i = 0; i < c.desc.numel(); ++i)
      storeFromDouble(c.data.data(), t, i,
                      v.empty() ? std::sin(0.7 * static_cast<double>(i)) : v[i]);
    return c;
  };
  const auto network = [&](NetworkDefinition& net) {
    auto x = *net.addInput("x", DataType::kFloat32, {2, 2, 5, 6});
    auto w = *net.addConstant("w", tensor(DataType::kFloat32, {3, 2, 3, 3}, {}));
    auto w4 = *net.addConstant("w4", tensor(DataType::kFloat32, {3, 4, 3, 3}, {}));
    auto bias = *net.addConstant("bias", tensor(DataType::kFloat32, {3}, {0.5, -1, 2}));
    auto pads = *net.addConstant("pads", tensor(DataType::kInt64, {8}, {0, 0, 1, 2, 0, 0, 3, 0}));
    auto chan = *net.addConstant("chan", tensor(DataType::kInt64, {8}, {0, 1, 0, 0, 0, 1, 0, 0}));
    auto one = *net.addConstant("one", tensor(DataType::kFloat32, {}, {1.0}));
    auto op = [&](const char* key, std::vector<TensorRef> in, Attrs at, const char* name) {
      return (*net.addOp(key, in, at, name))[0];
    };
    const Attrs conv{{"pads", AttrValue(std::vector<int64_t>{1, 0, 1, 1})},
                     {"strides", AttrValue(std::vector<int64_t>{2, 1})}};
    auto a =
        op("ai.onnx::Conv", {op("ai.onnx::Pad", {x, pads}, {}, "pad_a"), w, bias}, conv, "conv_a");
    auto b = op("ai.onnx::Conv", {op("ai.onnx::Pad", {x, pads, one}, {}, "pad_b"), w, bias}, conv,
                "conv_b");
    auto c =
        op("ai.onnx::Conv", {op("ai.onnx::Pad", {x, chan}, {}, "pad_c"), w4, bias}, {}, "conv_c");
    auto d =
        op("ai.onnx::Conv",
           {op("ai.onnx::Pad", {x, pads}, {{"mode", AttrValue(std::string("reflect"))}}, "pad_d"),
            w, bias},
           {}, "conv_d");
    EXPECT_TRUE(net.markOutput(a, "a").isOk());
    EXPECT_TRUE(net.markOutput(b, "b").isOk());
    EXPECT_TRUE(net.markOutput(c, "c").isOk());
    EXPECT_TRUE(net.markOutput(d, "d").isOk());
  };
  std::vector<float> xs(2 * 2 * 5 * 6);
  for (size_t i = 0; i < xs.size(); ++i) xs[i] = std::cos(0.29f * static_cast<float>(i));
  const auto run = [&](bool optimize, std::vector<std::string>* logs) {
    return buildAndRun(reg, network, optimize, xs, {"a", "b", "c", "d"}, logs);
  };
  std::vector<std::string> logs;
  const auto got = run(true, &logs), want = run(false, nullptr);
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i)
    ASSERT_NEAR(got[i], want[i], 1e-5f * (1.f + std::fabs(want[i]))) << "element " << i;
  EXPECT_TRUE(logged(logs, "1 zero Pads folded into Convs"));
}

// transpose_views: x [2, 3, 4, 5] viewed as [6, 4, 5], transposed (0, 2, 1) and viewed back as
// [2, 3, 5, 4] is one Transpose (0, 1, 3, 2) of x, equal to the unoptimized build; a view whose
// transpose moves the merged axis (perm (1, 0, 2)) stays three layers.
TEST(GraphPasses, TransposeOfAMergedViewIsOneTranspose) {
  auto reg = Registry::global();
  const auto network = [&](NetworkDefinition& net) {
    auto x = *net.addInput("x", DataType::kFloat32, {2, 3, 4, 5});
    auto op = [&](const char* key, std::vector<TensorRef> in, const char* name, Attrs a = {}) {
      return (*net.addOp(key, in, a, name))[0];
    };
    auto perm = [](std::vector<int64_t> p) { return Attrs{{"perm", AttrValue(p)}}; };
    auto v = op("ai.onnx::Reshape", {x, *net.addConstant("merged", ints({6, 4, 5}))}, "view");
    auto t = op("ai.onnx::Transpose", {v}, "swap", perm({0, 2, 1}));
    auto y = op("ai.onnx::Reshape", {t, *net.addConstant("back", ints({2, 3, 5, 4}))}, "view_back");
    auto v2 = op("ai.onnx::Reshape", {x, *net.addConstant("merged2", ints({6, 4, 5}))}, "view2");
    auto t2 = op("ai.onnx::Transpose", {v2}, "move", perm({1, 0, 2}));
    auto z =
        op("ai.onnx::Reshape", {t2, *net.addConstant("back2", ints({4, 2, 3, 5}))}, "view2_back");
    EXPECT_TRUE(net.markOutput(y, "y").isOk());
    EXPECT_TRUE(net.markOutput(z, "z").isOk());
  };
  std::vector<float> xs(120);
  for (size_t i = 0; i < xs.size(); ++i) xs[i] = static_cast<float>(i);
  std::vector<std::string> logs;
  const auto got = buildAndRun(reg, network, true, xs, {"y", "z"}, &logs);
  EXPECT_EQ(got, buildAndRun(reg, network, false, xs, {"y", "z"}, nullptr));
  ASSERT_EQ(got.size(), size_t{240});
  EXPECT_EQ(got[1], xs[5]);  // y[0, 0, 0, 1] = x[0, 0, 1, 0]
  EXPECT_TRUE(logged(logs, "1 transposes of merged-axis views made one Transpose"));
}

// concat_identity: an empty operand of a Concat is dropped (x ++ [] ++ x keeps two operands), a
// Concat left with one operand is bypassed (its readers read the operand), a one-operand Concat
// that is a network output stays; results equal the unoptimized build's.
TEST(GraphPasses, EmptyConcatOperandsAreDropped) {
  auto reg = Registry::global();
  const auto network = [&](NetworkDefinition& net) {
    auto x = *net.addInput("x", DataType::kFloat32, {2, 3});
    TensorValue empty{{DataType::kFloat32, {2, 0}}, {}};
    auto e = *net.addConstant("empty", empty);
    auto op = [&](const char* key, std::vector<TensorRef> in, const char* name, Attrs a = {}) {
      return (*net.addOp(key, in, a, name))[0];
    };
    const Attrs axis1{{"axis", AttrValue(int64_t{1})}};
    auto r = op("ai.onnx::Relu", {x}, "relu");
    auto one = op("ai.onnx::Concat", {e, r}, "cat_one", axis1);       // bypassed
    auto two = op("ai.onnx::Concat", {one, e, r}, "cat_two", axis1);  // [2, 6]
    auto y = op("ai.onnx::Neg", {two}, "neg");
    auto kept = op("ai.onnx::Concat", {r}, "cat_output", axis1);  // a network output
    EXPECT_TRUE(net.markOutput(y, "y").isOk());
    EXPECT_TRUE(net.markOutput(kept, "k").isOk());
  };
  const std::vector<float> xs = {-1, 2, -3, 4, 5, -6};
  std::vector<std::string> logs;
  const auto got = buildAndRun(reg, network, true, xs, {"y", "k"}, &logs);
  EXPECT_EQ(got, buildAndRun(reg, network, false, xs, {"y", "k"}, nullptr));
  ASSERT_EQ(got.size(), size_t{18});
  EXPECT_EQ(got[1], -2.f);  // y[0, 1] = -relu(x[0, 1])
  EXPECT_EQ(got[4], -2.f);  // y[0, 4]: the second copy
  EXPECT_TRUE(logged(logs, "1 Concats of one non-empty operand dropped"));
  EXPECT_TRUE(logged(logs, "1 empty Concat operands dropped"));
}

// An operand empty along another axis than the concatenation's still adds its extent to the
// output's: a fuzzer's model (tests/fuzz/regressions/onnx_bytes/onnx_bytes-concat-operand-empty-
// along-another-axis: a Loop's ConcatFromSequence of slices with no rows at the profile's shape,
// beside a [0, 4, 3] operand) built, and the plan did not load — the pass had dropped the
// [0, 4, 3] operand, so the plan recorded [rows, 64, 3] where the shape rule then gave [rows, 60,
// 3].
TEST(GraphPasses, OperandsEmptyAlongAnotherAxisAreKept) {
  const std::string path = std::string(OPFORGE_SOURCE_DIR) +
                           "/tests/fuzz/regressions/onnx_bytes/"
                           "onnx_bytes-concat-operand-empty-along-another-axis";
  auto reg = Registry::global();
  auto net = importOnnx(path, reg);
  ASSERT_TRUE(net.isOk()) << net.status().message();
  BuilderConfig cfg;
  OptimizationProfile prof;
  for (int id : net->graph().inputs) {  // dynamic dimensions at 1, as the fuzzer builds them
    const graph::Value& v = net->graph().values[id];
    std::vector<int64_t> dims;
    for (const DimExpr& d : v.dims) dims.push_back(d.isConst() ? d.constValue() : 1);
    prof.set(v.name, dims, dims, dims);
  }
  cfg.profiles.push_back(prof);
  auto plan = Builder(reg).buildSerializedNetwork(*net, cfg);
  ASSERT_TRUE(plan.isOk()) << plan.status().message();
  auto e = Engine::loadMemory(std::move(*plan), "concat.plan", reg);
  EXPECT_TRUE(e.isOk()) << e.status().message();
}
