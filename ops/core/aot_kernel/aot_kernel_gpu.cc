// opforge::AotKernel on the GPU (label gpu, part of opforge_gpu_engine_tests; skips without a
// GPU): the hand-written PTX module of aot_kernel_testing.h built into a CUDA plan and run by the
// C++ runtime — two launches per layer, an i32 and an i64 expression argument, a float argument,
// dynamic shapes, CUDA graph replay and concurrent contexts — against the host computation.
#include <gtest/gtest.h>

#include <thread>

#include "aot_kernel_testing.h"
#include "op_harness.h"
#include "opforge/builder.h"
#include "opforge/device.h"
#include "opforge/runtime.h"

using namespace opforge;
using opforge::ops::aot::testing::aotAttrs;
using opforge::ops::aot::testing::expected;

namespace {

#define REQUIRE_AOT_GPU()       \
  if (!cudaDeviceInfo().isOk()) \
  GTEST_SKIP() << "no CUDA GPU: " << cudaDeviceInfo().status().message()

std::shared_ptr<Engine> buildAot(int64_t lo, int64_t opt, int64_t hi,
                                 const Attrs& attrs = aotAttrs()) {
  NetworkDefinition net(Registry::global());
  auto x = *net.addInput("x", DataType::kFloat32, {-1, 8});
  auto y = net.addOp("opforge::AotKernel", {x}, attrs, "aot");
  EXPECT_TRUE(y.isOk()) << y.status().message();
  if (!y) return nullptr;
  EXPECT_TRUE(net.markOutput((*y)[0], "y").isOk());
  BuilderConfig cfg;
  cfg.backend = Backend::kCuda;
  cfg.profiles.push_back(OptimizationProfile{}.set("x", {lo, 8}, {opt, 8}, {hi, 8}));
  auto plan = Builder(Registry::global()).buildSerializedNetwork(net, cfg);
  EXPECT_TRUE(plan.isOk()) << plan.status().message();
  if (!plan) return nullptr;
  auto e = Engine::loadMemory(std::move(*plan), "aot.plan", Registry::global());
  EXPECT_TRUE(e.isOk()) << e.status().message();
  return e ? *e : nullptr;
}

std::vector<float> input(int64_t rows, float seed) {
  std::vector<float> v(rows * 8);
  for (size_t i = 0; i < v.size(); ++i) v[i] = seed + 0.25f * static_cast<float>(i % 101);
  return v;
}

std::vector<float> runAot(Engine& e, const std::vector<float>& x, bool graph, int reps,
                          bool* used_graph = nullptr) {
  auto ctx = std::move(e.createExecutionContext()).value();
  ctx->setUseCudaGraph(graph);
  ctx->setDebugPoison(true);  // outputs poisoned first: a launch that writes nothing fails
  EXPECT_TRUE(ctx->setInputShape("x", {static_cast<int64_t>(x.size() / 8), 8}).isOk());
  EXPECT_TRUE(ctx->setInput("x", x.data(), x.size() * 4).isOk());
  for (int r = 0; r < reps; ++r) {
    Status st = ctx->execute();
    EXPECT_TRUE(st.isOk()) << st.message();
    if (!st) return {};
  }
  if (used_graph) *used_graph = ctx->lastRunTimes().cuda_graph;
  Tensor y = *ctx->output("y");
  return std::vector<float>(y.as<float>(), y.as<float>() + y.numel());
}

}  // namespace

TEST(GpuAotKernel, HandWrittenPtxMatchesTheHostAcrossShapes) {
  REQUIRE_AOT_GPU();
  auto e = buildAot(1, 8, 300);
  ASSERT_TRUE(e);
  EXPECT_EQ(e->backend(), Backend::kCuda);
  for (int64_t rows : {1, 3, 17, 300}) {
    auto x = input(rows, 0.5f * static_cast<float>(rows));
    EXPECT_EQ(runAot(*e, x, false, 1), expected(x)) << rows << " rows";
  }
}

TEST(GpuAotKernel, CapturedIntoACudaGraph) {
  REQUIRE_AOT_GPU();
  auto e = buildAot(5, 5, 5);
  ASSERT_TRUE(e);
  auto x = input(5, -3.f);
  bool used = false;
  auto y = runAot(*e, x, true, 4, &used);
  EXPECT_TRUE(used) << "the 4th run should replay a CUDA graph holding the AOT launches";
  EXPECT_EQ(y, expected(x));
}

TEST(GpuAotKernel, ConcurrentContextsShareTheLoadedKernels) {
  REQUIRE_AOT_GPU();
  auto e = buildAot(1, 4, 64);
  ASSERT_TRUE(e);
  std::vector<std::thread> threads;
  std::vector<int> ok(4, 0);
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&, t] {
      for (int r = 0; r < 20; ++r) {
        auto x = input(1 + (t * 7 + r) % 64, static_cast<float>(t));
        ok[t] += runAot(*e, x, r % 2 == 0, 2) == expected(x);
      }
    });
  for (auto& th : threads) th.join();
  for (int t = 0; t < 4; ++t) EXPECT_EQ(ok[t], 20) << "thread " << t;
}

TEST(GpuAotKernel, TheBuilderTimesTheVariantsAndKeepsTheFaster) {
  // Two variants computing the same y, one with 200 extra launches: the builder times both
  // (tactics 1 and 2) and keeps the other, whichever variant number it has; the result is right.
  REQUIRE_AOT_GPU();
  for (int slow : {0, 1}) {
    auto e = buildAot(64, 64, 64,
                      aotAttrs(opforge::ops::aot::testing::kPtx,
                               opforge::ops::aot::testing::twoVariants(slow, 200)));
    ASSERT_TRUE(e);
    const std::string want = slow == 0 ? "2 (cuda.aot.variant1)" : "1 (cuda.aot)";
    EXPECT_EQ(e->layers()[0].tactic, want) << "slow variant " << slow;
    auto x = input(64, 1.f);
    EXPECT_EQ(runAot(*e, x, false, 1), expected(x)) << "slow variant " << slow;
  }
}
