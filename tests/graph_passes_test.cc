// The builder's graph passes: each has its own order number, and a verbose build lists the passes
// it ran, in order.
#include <gtest/gtest.h>

#include <algorithm>
#include <set>

#include "builder/build_state.h"
#include "graph/passes.h"
#include "opforge/builder.h"
#include "opforge/network.h"
#include "opforge/registry.h"

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
