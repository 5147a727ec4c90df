// The CUDA engine end to end (label `gpu`): every test skips itself where there is no GPU.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <random>
#include <thread>

#include "common/wire.h"
#include "op_harness.h"
#include "opforge/device.h"
#include "opforge/io.h"
#include "ops/contrib/deformable_aggregation/da_problem.h"
#include "plan/plan.h"

using namespace opforge;
using opforge::test::contribRegistry;

namespace {
bool haveGpu() {
  return cudaDeviceInfo().isOk();
}
#define REQUIRE_GPU() \
  if (!haveGpu()) GTEST_SKIP() << "no CUDA GPU: " << cudaDeviceInfo().status().message()

std::vector<float> iota(size_t n, float start = 0.25f) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = start + 0.5f * static_cast<float>(i % 997);
  return v;
}

NetworkDefinition padAddNet() {
  NetworkDefinition net(contribRegistry());
  auto x = *net.addInput("x", DataType::kFloat32, {-1, 3, 16, 16});
  auto p = *net.addOp("example::circ_pad_plugin", {x}, {{"pads", std::vector<int32_t>{1, 2, 2, 1}}},
                      "pad");
  auto a = *net.addOp("sample::elemwise_add_plugin_", {p[0]}, {{"delta", int64_t{2}}}, "add");
  EXPECT_TRUE(net.markOutput(a[0], "y").isOk());
  return net;
}

std::shared_ptr<Engine> build(const NetworkDefinition& net, Backend b,
                              std::vector<OptimizationProfile> profiles = {},
                              std::shared_ptr<Registry> reg = contribRegistry()) {
  BuilderConfig cfg;
  cfg.backend = b;
  cfg.profiles = std::move(profiles);
  Builder builder(reg);
  auto plan = builder.buildSerializedNetwork(net, cfg);
  EXPECT_TRUE(plan.isOk()) << plan.status().message();
  if (!plan) return nullptr;
  auto e = Engine::loadMemory(std::move(*plan), "gpu.plan", reg);
  EXPECT_TRUE(e.isOk()) << e.status().message();
  return e ? *e : nullptr;
}

std::vector<float> run(Engine& e, int64_t n, const std::vector<float>& in, bool graph = true,
                       int reps = 1, bool* used_graph = nullptr) {
  auto ctx = std::move(e.createExecutionContext()).value();
  ctx->setUseCudaGraph(graph);
  ctx->setDebugPoison(true);
  EXPECT_TRUE(ctx->setInputShape("x", {n, 3, 16, 16}).isOk());
  EXPECT_TRUE(ctx->setInput("x", in.data(), in.size() * 4).isOk());
  for (int r = 0; r < reps; ++r) {
    Status st = ctx->execute();
    EXPECT_TRUE(st.isOk()) << st.message();
  }
  if (used_graph) *used_graph = ctx->lastRunTimes().cuda_graph;
  Tensor y = *ctx->output("y");
  return std::vector<float>(y.as<float>(), y.as<float>() + y.numel());
}
}  // namespace

TEST(GpuEngine, MatchesTheCpuPlanAcrossShapes) {
  REQUIRE_GPU();
  std::vector<OptimizationProfile> prof{
      OptimizationProfile{}.set("x", {1, 3, 16, 16}, {4, 3, 16, 16}, {8, 3, 16, 16})};
  auto cpu = build(padAddNet(), Backend::kCpu, prof);
  auto gpu = build(padAddNet(), Backend::kCuda, prof);
  ASSERT_TRUE(cpu && gpu);
  EXPECT_EQ(gpu->backend(), Backend::kCuda);
  for (const auto& l : gpu->layers()) EXPECT_GE(l.build_time_ms, 0.0) << l.name << " was not timed";
  for (int64_t n : {1, 3, 8}) {
    auto in = iota(n * 3 * 256);
    EXPECT_EQ(run(*gpu, n, in), run(*cpu, n, in)) << "batch " << n;
  }
}

TEST(GpuEngine, CudaGraphReplayGivesTheSameAnswer) {
  REQUIRE_GPU();
  std::vector<OptimizationProfile> prof{
      OptimizationProfile{}.set("x", {2, 3, 16, 16}, {2, 3, 16, 16}, {2, 3, 16, 16})};
  auto gpu = build(padAddNet(), Backend::kCuda, prof);
  ASSERT_TRUE(gpu);
  auto in = iota(2 * 3 * 256);
  bool used = false;
  auto with = run(*gpu, 2, in, true, 4, &used);
  EXPECT_TRUE(used) << "the 4th run should replay a CUDA graph";
  auto without = run(*gpu, 2, in, false, 2, &used);
  EXPECT_FALSE(used);
  EXPECT_EQ(with, without);
}

TEST(GpuEngine, DataDependentShapesAndCpuFallbackLayers) {
  REQUIRE_GPU();
  // non_zero (CUDA) -> Cast -> Mul: built-in layers without CUDA tactics run on the CPU.
  NetworkDefinition net(contribRegistry());
  auto x = *net.addInput("x", DataType::kFloat32, {64, 64});
  auto nz = *net.addOp("example::non_zero_plugin", {x});
  auto f = *net.addOp("ai.onnx::Cast", {nz[0]}, {{"to", int64_t{1}}});
  ASSERT_TRUE(net.markOutput(f[0], "y").isOk());
  ASSERT_TRUE(net.markOutput(nz[1], "count").isOk());
  auto e = build(net, Backend::kCuda);
  ASSERT_TRUE(e);
  auto ctx = std::move(e->createExecutionContext()).value();
  std::vector<float> in(4096, 0.f);
  std::vector<float> want;
  for (int i = 0; i < 4096; i += 3) {
    in[i] = 1.f + i;
    want.push_back(static_cast<float>(i / 64));
    want.push_back(static_cast<float>(i % 64));
  }
  ASSERT_TRUE(ctx->setInput("x", in.data(), in.size() * 4).isOk());
  for (int rep = 0; rep < 2; ++rep) {
    Status st = ctx->execute();
    ASSERT_TRUE(st.isOk()) << st.message();
    EXPECT_FALSE(ctx->lastRunTimes().cuda_graph);
    EXPECT_EQ(*ctx->shape("y"), (std::vector<int64_t>{static_cast<int64_t>(want.size() / 2), 2}));
    Tensor y = *ctx->output("y");
    EXPECT_EQ(std::vector<float>(y.as<float>(), y.as<float>() + y.numel()), want);
  }
}

// Run-time shape values on CUDA (opforge::ReadValues, as the importer adds it for Mask R-CNN's
// paste): zeros of a run-time length n, then x: the length, the buffers the run allocates (grown
// and shrunk on one context) and the values, against the formula, with and without CUDA graphs
// requested (such a plan runs layer by layer).
TEST(GpuEngine, RunTimeShapeValuesSizeLayersOnTheGpu) {
  REQUIRE_GPU();
  NetworkDefinition net(contribRegistry());
  auto x = *net.addInput("x", DataType::kFloat32, {6});
  auto n = *net.addInput("n", DataType::kInt64, {1});
  auto rv = *net.addOp("opforge::ReadValues", {n}, {}, "read");
  auto zeros = *net.addOp("ai.onnx::ConstantOfShape", {rv[0]}, {}, "zeros");
  auto cat = *net.addOp("ai.onnx::Concat", {zeros[0], x}, {{"axis", int64_t{0}}}, "concat");
  ASSERT_TRUE(net.markOutput(cat[0], "y").isOk());
  auto e = build(net, Backend::kCuda);
  ASSERT_TRUE(e);
  bool read_on_gpu = false;
  for (const auto& l : e->layers())
    read_on_gpu |= l.op == "opforge::ReadValues v1" && l.tactic.find("cuda") != std::string::npos;
  EXPECT_TRUE(read_on_gpu) << e->inspect();
  const std::vector<float> xs = {1, 2, 3, 4, 5, 6};
  for (bool graph : {true, false}) {
    auto ctx = std::move(e->createExecutionContext()).value();
    ctx->setUseCudaGraph(graph);
    ctx->setDebugPoison(true);
    ASSERT_TRUE(ctx->setInput("x", xs.data(), 24).isOk());
    for (int64_t len : {int64_t{3}, int64_t{0}, int64_t{40}, int64_t{2}, int64_t{1000}}) {
      SCOPED_TRACE(std::to_string(len) + (graph ? " graph" : ""));
      ASSERT_TRUE(ctx->setInput("n", &len, 8).isOk());
      const Status st = ctx->execute();
      ASSERT_TRUE(st.isOk()) << st.message();
      EXPECT_FALSE(ctx->lastRunTimes().cuda_graph);
      Tensor y = *ctx->output("y");
      ASSERT_EQ(y.desc.dims, (std::vector<int64_t>{len + 6}));
      for (int64_t i = 0; i < len + 6; ++i)
        ASSERT_EQ(y.as<float>()[i], i < len ? 0.0f : xs[i - len]) << i;
    }
    // A negative length: the run's error names the layer, and the context runs again.
    const int64_t bad = -2, good = 1;
    ASSERT_TRUE(ctx->setInput("n", &bad, 8).isOk());
    EXPECT_FALSE(ctx->execute().isOk());
    ASSERT_TRUE(ctx->setInput("n", &good, 8).isOk());
    ASSERT_TRUE(ctx->execute().isOk());
    EXPECT_EQ(ctx->output("y")->desc.dims, (std::vector<int64_t>{7}));
  }
}

TEST(GpuEngine, SeveralContextsInThreads) {
  REQUIRE_GPU();
  std::vector<OptimizationProfile> prof{
      OptimizationProfile{}.set("x", {1, 3, 16, 16}, {4, 3, 16, 16}, {8, 3, 16, 16})};
  auto cpu = build(padAddNet(), Backend::kCpu, prof);
  auto gpu = build(padAddNet(), Backend::kCuda, prof);
  ASSERT_TRUE(cpu && gpu);
  std::vector<std::vector<float>> want(9);
  for (int64_t n = 1; n <= 8; ++n) want[n] = run(*cpu, n, iota(n * 768, static_cast<float>(n)));
  std::atomic<int> bad{0};
  std::vector<std::thread> th;
  for (int t = 0; t < 4; ++t)
    th.emplace_back([&, t] {
      auto ctx = std::move(gpu->createExecutionContext()).value();
      for (int rep = 0; rep < 40; ++rep) {
        int64_t n = 1 + (t * 3 + rep) % 8;
        auto in = iota(n * 768, static_cast<float>(n));
        if (!ctx->setInputShape("x", {n, 3, 16, 16}).isOk() ||
            !ctx->setInput("x", in.data(), in.size() * 4).isOk() || !ctx->execute().isOk()) {
          ++bad;
          continue;
        }
        Tensor y = *ctx->output("y");
        if (std::vector<float>(y.as<float>(), y.as<float>() + y.numel()) != want[n]) ++bad;
      }
    });
  for (auto& x : th) x.join();
  EXPECT_EQ(bad.load(), 0);
}

TEST(GpuEngine, PlanFromAnotherArchitectureIsRefused) {
  REQUIRE_GPU();
  std::vector<OptimizationProfile> prof{
      OptimizationProfile{}.set("x", {1, 3, 16, 16}, {1, 3, 16, 16}, {1, 3, 16, 16})};
  BuilderConfig cfg;
  cfg.backend = Backend::kCuda;
  cfg.profiles = prof;
  auto bytes = *Builder(contribRegistry()).buildSerializedNetwork(padAddNet(), cfg);
  const uint8_t* w = nullptr;
  size_t ws = 0;
  auto p = *plan::deserialize(bytes.data(), bytes.size(), "t", &w, &ws);
  std::vector<uint8_t> weights(w, w + ws);
  p.arch = "sm_75";
  p.device = "Tesla T4";
  auto other = plan::serialize(p, weights);
  auto r = Engine::loadMemory(other, "t4.plan", contribRegistry());
  ASSERT_FALSE(r.isOk());
  EXPECT_EQ(r.status().code(), StatusCode::kVersion);
  EXPECT_NE(r.status().message().find("Tesla T4, sm_75"), std::string::npos)
      << r.status().message();
  EXPECT_NE(r.status().message().find(cudaDeviceInfo().value().arch()), std::string::npos);
  p.arch = cudaDeviceInfo().value().arch();
  p.cuda_runtime = 99000;  // a newer CUDA than this machine has
  auto newer = Engine::loadMemory(plan::serialize(p, weights), "cuda99.plan", contribRegistry());
  ASSERT_FALSE(newer.isOk());
  EXPECT_NE(newer.status().message().find("CUDA 99"), std::string::npos)
      << newer.status().message();
}

TEST(GpuEngine, OutOfDeviceMemoryIsAnErrorAndTheContextRecovers) {
  REQUIRE_GPU();
  // A profile whose max needs ~1.7 TB of activations (under the 2^40-element limit per tensor).
  NetworkDefinition net(contribRegistry());
  auto x = *net.addInput("x", DataType::kFloat32, {-1, 1024, 1024});
  auto p = *net.addOp("example::circ_pad_plugin", {x}, {{"pads", std::vector<int32_t>{1, 1}}});
  ASSERT_TRUE(net.markOutput(p[0], "y").isOk());
  auto e = build(
      net, Backend::kCuda,
      {OptimizationProfile{}.set("x", {1, 1024, 1024}, {1, 1024, 1024}, {200000, 1024, 1024})});
  ASSERT_TRUE(e);
  auto ctx = std::move(e->createExecutionContext()).value();
  ASSERT_TRUE(ctx->setInputShape("x", {200000, 1024, 1024}).isOk());
  std::vector<float> small(1024 * 1024, 1.f);
  Status st = ctx->setInput("x", small.data(), small.size() * 4);
  ASSERT_FALSE(st.isOk());
  EXPECT_NE(st.message().find("out of device memory"), std::string::npos) << st.message();
  ASSERT_TRUE(ctx->setInputShape("x", {1, 1024, 1024}).isOk());
  ASSERT_TRUE(ctx->setInput("x", small.data(), small.size() * 4).isOk());
  Status ok = ctx->execute();
  EXPECT_TRUE(ok.isOk()) << ok.message();
}

TEST(GpuEngine, ATacticFailingAtRunTimeNamesLayerAndTactic) {
  REQUIRE_GPU();
  auto reg = Registry::create();
  const Status loaded =
      reg->loadLibrary(opforge::test::binaryDir() + "/lib/libtest_plugin_failing.so");
  ASSERT_TRUE(loaded.isOk()) << loaded.message();
  NetworkDefinition net(reg);
  auto x = *net.addInput("x", DataType::kFloat32, {-1, 8});
  auto y = *net.addOp("test::failing", {x}, {{"limit", int64_t{4}}}, "fragile");
  ASSERT_TRUE(net.markOutput(y[0], "y").isOk());
  auto e =
      build(net, Backend::kCuda, {OptimizationProfile{}.set("x", {1, 8}, {2, 8}, {16, 8})}, reg);
  ASSERT_TRUE(e);
  auto ctx = std::move(e->createExecutionContext()).value();
  ASSERT_TRUE(ctx->setInputShape("x", {8, 8}).isOk());
  std::vector<float> in(64, 1.f);
  ASSERT_TRUE(ctx->setInput("x", in.data(), 256).isOk());
  Status st = ctx->execute();
  ASSERT_FALSE(st.isOk());
  EXPECT_NE(st.message().find("node 'fragile'"), std::string::npos) << st.message();
  EXPECT_NE(st.message().find("cuda.fails_above_limit"), std::string::npos) << st.message();
  EXPECT_NE(st.message().find("deliberate failure"), std::string::npos);
  // The context is still usable.
  ASSERT_TRUE(ctx->setInputShape("x", {2, 8}).isOk());
  ASSERT_TRUE(ctx->setInput("x", in.data(), 64).isOk());
  EXPECT_TRUE(ctx->execute().isOk());
}

TEST(GpuEngine, PlanSavedAndLoadedRunsTheSame) {
  REQUIRE_GPU();
  std::vector<OptimizationProfile> prof{
      OptimizationProfile{}.set("x", {1, 3, 16, 16}, {2, 3, 16, 16}, {4, 3, 16, 16})};
  BuilderConfig cfg;
  cfg.backend = Backend::kCuda;
  cfg.profiles = prof;
  cfg.timing_cache_file = test::testDir() + "/gpu.cache";
  auto bytes = *Builder(contribRegistry()).buildSerializedNetwork(padAddNet(), cfg);
  std::string path = test::testDir() + "/gpu.plan";
  ASSERT_TRUE(writeFileAtomic(path, bytes).isOk());
  auto e = Engine::loadFile(path, contribRegistry());
  ASSERT_TRUE(e.isOk()) << e.status().message();
  auto in = iota(3 * 768);
  auto cpu = build(padAddNet(), Backend::kCpu, prof);
  EXPECT_EQ(run(**e, 3, in), run(*cpu, 3, in));
  // A second build reads the timing cache.
  std::vector<std::string> logs;
  cfg.log = [&](const std::string& m) { logs.push_back(m); };
  ASSERT_TRUE(Builder(contribRegistry()).buildSerializedNetwork(padAddNet(), cfg).isOk());
  bool hits = false;
  for (const auto& l : logs)
    hits |= l.find("timing cache: ") != std::string::npos && l.find(" 0 hits") == std::string::npos;
  EXPECT_TRUE(hits) << "the second build did not hit the timing cache";
}

// Device errors travel through the layer's record (opforge/device_error.h), not through the
// tactic's status: a CUDA graph replay reports them as an eager run does, naming the layer.
TEST(GpuEngine, DeviceErrorsOfACudaGraphReplayNameTheLayer) {
  REQUIRE_GPU();
  {  // A built-in op: Gather with an index out of range.
    auto reg = Registry::create();
    NetworkDefinition net(reg);
    auto x = *net.addInput("x", DataType::kFloat32, {5, 4});
    auto i = *net.addInput("i", DataType::kInt64, {3});
    auto g = *net.addOp("ai.onnx::Gather", {x, i}, {{"axis", int64_t{0}}}, "lookup");
    ASSERT_TRUE(net.markOutput(g[0], "y").isOk());
    auto e = build(net, Backend::kCuda, {}, reg);
    ASSERT_TRUE(e);
    auto ctx = std::move(e->createExecutionContext()).value();
    std::vector<float> xs(20, 1.f);
    const std::vector<int64_t> good{0, -1, 4}, bad{0, 11, 4};
    ASSERT_TRUE(ctx->setInput("x", xs.data(), 80).isOk());
    ASSERT_TRUE(ctx->setInput("i", good.data(), 24).isOk());
    ASSERT_TRUE(ctx->execute().isOk());  // eager
    ASSERT_TRUE(ctx->execute().isOk());  // captured, then launched
    for (int rep = 0; rep < 2; ++rep) {
      ASSERT_TRUE(ctx->setInput("i", bad.data(), 24).isOk());
      Status st = ctx->execute();
      EXPECT_TRUE(ctx->lastRunTimes().cuda_graph) << "run " << rep << " was not a graph replay";
      ASSERT_FALSE(st.isOk()) << "run " << rep << ": the index 11 was not reported";
      EXPECT_EQ(st.code(), StatusCode::kOutOfRange) << st.message();
      EXPECT_NE(st.message().find("node 'lookup'"), std::string::npos) << st.message();
      EXPECT_NE(st.message().find("holds 11 at position 1"), std::string::npos) << st.message();
      ASSERT_TRUE(ctx->setInput("i", good.data(), 24).isOk());
      st = ctx->execute();
      EXPECT_TRUE(st.isOk()) << "run " << rep << " after the error: " << st.message();
      EXPECT_TRUE(ctx->lastRunTimes().cuda_graph);
    }
  }
  {  // A contrib op: DeformableAggregation with a level table pointing outside the features.
    opforge::test::DaProblem p;
    std::mt19937_64 rng(11);
    const auto in = opforge::test::makeDaInputs(p, rng);
    auto reg = contribRegistry();
    NetworkDefinition net(reg);
    const char* names[] = {"feat", "sp", "st", "loc", "w"};
    std::vector<TensorRef> refs;
    for (size_t k = 0; k < in.size(); ++k)
      refs.push_back(*net.addInput(names[k], in[k].desc.dtype, in[k].desc.dims));
    auto y = net.addOp("opforge::DeformableAggregation", refs, {}, "da");
    ASSERT_TRUE(y.isOk()) << y.status().message();
    ASSERT_TRUE(net.markOutput((*y)[0], "y").isOk());
    auto e = build(net, Backend::kCuda, {}, reg);
    ASSERT_TRUE(e);
    auto ctx = std::move(e->createExecutionContext()).value();
    auto set = [&](const std::vector<TensorValue>& v) {
      for (size_t k = 0; k < v.size(); ++k)
        ASSERT_TRUE(ctx->setInput(names[k], v[k].data.data(), v[k].data.size()).isOk());
    };
    auto bad = in;
    reinterpret_cast<int32_t*>(bad[2].data.data())[3] = static_cast<int32_t>(p.F() - 1);
    set(in);
    ASSERT_TRUE(ctx->execute().isOk());
    ASSERT_TRUE(ctx->execute().isOk());
    set(bad);
    Status st = ctx->execute();
    EXPECT_TRUE(ctx->lastRunTimes().cuda_graph) << "the bad run was not a graph replay";
    ASSERT_FALSE(st.isOk()) << "the bad table was not reported";
    EXPECT_EQ(st.code(), StatusCode::kOutOfRange) << st.message();
    EXPECT_NE(st.message().find("node 'da'"), std::string::npos) << st.message();
    EXPECT_NE(st.message().find("outside mc_ms_feat"), std::string::npos) << st.message();
    set(in);
    st = ctx->execute();
    EXPECT_TRUE(st.isOk()) << st.message();
  }
}

// Builds `net` for the CPU and for the GPU in FP32 and FP16, runs each on one random input `x`
// of `dims` and compares output `y` with the CPU plan's; prints the error and the GPU layers.
void expectGpuPlansMatchTheCpu(const char* what, const std::function<void(NetworkDefinition&)>& net,
                               const std::vector<int64_t>& dims) {
  auto reg = Registry::create();
  std::mt19937_64 rng(23);
  TensorValue xin = test::randomTensor(DataType::kFloat32, dims, rng);
  auto runOn = [&](Backend b, bool fp16, std::vector<std::string>* logs) {
    NetworkDefinition n(reg);
    net(n);
    BuilderConfig cfg;
    cfg.backend = b;
    cfg.fp16 = fp16;
    cfg.log = [logs](const std::string& l) { logs->push_back(l); };
    auto plan = Builder(reg).buildSerializedNetwork(n, cfg);
    EXPECT_TRUE(plan.isOk()) << plan.status().message();
    if (!plan) return std::vector<float>{};
    auto e =
        std::move(Engine::loadMemory(std::move(*plan), std::string(what) + ".plan", reg)).value();
    for (const auto& l : e->layers())
      logs->push_back("layer " + l.name + " " + l.combo + " " + l.tactic);
    auto ctx = std::move(e->createExecutionContext()).value();
    ctx->setDebugPoison(true);
    EXPECT_TRUE(ctx->setInput("x", xin.data.data(), xin.data.size()).isOk());
    EXPECT_TRUE(ctx->execute().isOk());
    Tensor y = *ctx->output("y");
    return std::vector<float>(y.as<float>(), y.as<float>() + y.numel());
  };
  std::vector<std::string> cpu_log, fp32_log, fp16_log;
  const auto want = runOn(Backend::kCpu, false, &cpu_log);
  const auto fp32 = runOn(Backend::kCuda, false, &fp32_log);
  const auto fp16 = runOn(Backend::kCuda, true, &fp16_log);
  ASSERT_FALSE(want.empty());
  ASSERT_EQ(fp32.size(), want.size());
  ASSERT_EQ(fp16.size(), want.size());
  double e32 = 0, e16 = 0, mag = 0;
  for (size_t i = 0; i < want.size(); ++i) {
    ASSERT_FALSE(std::isnan(fp32[i]) || std::isnan(fp16[i])) << i;
    e32 = std::max(e32, std::fabs(double(fp32[i]) - want[i]));
    e16 = std::max(e16, std::fabs(double(fp16[i]) - want[i]));
    mag = std::max(mag, std::fabs(double(want[i])));
  }
  std::string layers;
  for (const auto& l : fp16_log) layers += l + "\n";
  // The FP16 build chose its precisions for the whole graph (src/builder/precision.cc).
  auto planned = [](const std::vector<std::string>& log) {
    return std::any_of(log.begin(), log.end(),
                       [](const std::string& l) { return l.find("precision plan: ") == 0; });
  };
  EXPECT_TRUE(planned(fp16_log)) << layers;
  EXPECT_FALSE(planned(fp32_log));
  // FP32 may run on TF32 tensor cores (the default): 10-bit mantissas; FP16 stores 11 bits.
  EXPECT_LE(e32, 2e-2 * mag) << layers;
  EXPECT_LE(e16, 3e-2 * mag) << layers;
  std::printf("%s: max |err| FP32 %.3g, FP16 %.3g (max |y| %.3g)\n", what, e32, e16, mag);
  for (const auto& l : fp16_log)
    if (l.find("layer ") == 0 || l.find("built ") != l.npos) std::printf("  %s\n", l.c_str());
}

// c(name, dims, scale): a constant of `dims` in n, random values times `scale`, from a generator
// of a fixed seed (every build of the network sees the same weights).
auto scaledConstants(NetworkDefinition& n, uint64_t seed) {
  return [&n, wr = std::mt19937_64(seed)](const std::string& name, std::vector<int64_t> dims,
                                          double scale) mutable {
    TensorValue t = test::randomTensor(DataType::kFloat32, dims, wr);
    for (int64_t i = 0; i < t.desc.numel(); ++i)
      reinterpret_cast<float*>(t.data.data())[i] *= static_cast<float>(scale);
    return *n.addConstant(name, t);
  };
}

// A ConvNeXt block as torchvision exports it (depthwise 7x7, to NHWC, LayerNorm, two projections,
// back to NCHW, residual Add), twice, built for the GPU in FP16 and FP32 and against the CPU plan:
// the passes (transpose_sinking, gemm_residual) and whatever the builder picks — cuda.depthwise on
// channels-last tensors with Transpose views in place where it is faster — give the CPU's answer.
TEST(GpuEngine, ConvNextBlocksMatchTheCpuPlan) {
  REQUIRE_GPU();
  expectGpuPlansMatchTheCpu(
      "convnext blocks",
      [](NetworkDefinition& n) {
        auto c = scaledConstants(n, 5);
        auto x = *n.addInput("x", DataType::kFloat32, {2, 32, 14, 14});
        TensorRef s = x;
        for (int k = 0; k < 2; ++k) {
          const std::string b = "b" + std::to_string(k) + ".";
          auto dw = *n.addOp(
              "ai.onnx::Conv", {s, c(b + "dw", {32, 1, 7, 7}, 0.2), c(b + "db", {32}, 0.1)},
              {{"group", int64_t{32}}, {"pads", std::vector<int64_t>{3, 3, 3, 3}}}, b + "dw");
          auto t =
              *n.addOp("ai.onnx::Transpose", {dw[0]}, {{"perm", std::vector<int64_t>{0, 2, 3, 1}}});
          auto ln = *n.addOp("ai.onnx::LayerNormalization",
                             {t[0], c(b + "g", {32}, 1.0), c(b + "lb", {32}, 0.1)},
                             {{"axis", int64_t{-1}}});
          auto m1 = *n.addOp("ai.onnx::MatMul", {ln[0], c(b + "w1", {32, 128}, 0.2)}, {});
          auto a1 = *n.addOp("ai.onnx::Add", {m1[0], c(b + "b1", {128}, 0.1)}, {});
          auto r1 = *n.addOp("ai.onnx::Relu", {a1[0]}, {});
          auto m2 = *n.addOp("ai.onnx::MatMul", {r1[0], c(b + "w2", {128, 32}, 0.1)}, {});
          auto a2 = *n.addOp("ai.onnx::Add", {m2[0], c(b + "b2", {32}, 0.1)}, {});
          auto back =
              *n.addOp("ai.onnx::Transpose", {a2[0]}, {{"perm", std::vector<int64_t>{0, 3, 1, 2}}});
          s = (*n.addOp("ai.onnx::Add", {back[0], s}, {}))[0];
        }
        EXPECT_TRUE(n.markOutput(s, "y").isOk());
      },
      {2, 32, 14, 14});
}

// An EfficientNet MBConv block as torchvision exports it (1x1 expansion + SiLU, depthwise 3x3 +
// SiLU, squeeze-excitation: GlobalAveragePool, two 1x1 convolutions, Sigmoid, the scale Mul;
// projection, residual Add), twice, against the CPU plan: the channels-last GlobalAveragePool and
// Mul, and the Reformat views of the [N, C, 1, 1] scale where the builder picks them.
TEST(GpuEngine, MbConvBlocksMatchTheCpuPlan) {
  REQUIRE_GPU();
  expectGpuPlansMatchTheCpu(
      "mbconv blocks",
      [](NetworkDefinition& n) {
        auto c = scaledConstants(n, 7);
        auto conv = [&](TensorRef in, const std::string& name, int64_t cin, int64_t cout, int64_t k,
                        int64_t group) {
          const int64_t p = k / 2;
          return (*n.addOp(
              "ai.onnx::Conv",
              {in, c(name + ".w", {cout, cin / group, k, k}, 0.3), c(name + ".b", {cout}, 0.1)},
              {{"group", group}, {"pads", std::vector<int64_t>{p, p, p, p}}}, name))[0];
        };
        auto silu = [&](TensorRef in) {
          auto sg = *n.addOp("ai.onnx::Sigmoid", {in}, {});
          return (*n.addOp("ai.onnx::Mul", {in, sg[0]}, {}))[0];
        };
        auto x = *n.addInput("x", DataType::kFloat32, {2, 16, 12, 12});
        TensorRef s = x;
        for (int k = 0; k < 2; ++k) {
          const std::string b = "b" + std::to_string(k);
          auto e = silu(conv(s, b + ".expand", 16, 64, 1, 1));
          auto d = silu(conv(e, b + ".dw", 64, 64, 3, 64));
          auto g = *n.addOp("ai.onnx::GlobalAveragePool", {d}, {});
          auto f1 = silu(conv(g[0], b + ".fc1", 64, 8, 1, 1));
          auto f2 = *n.addOp("ai.onnx::Sigmoid", {conv(f1, b + ".fc2", 8, 64, 1, 1)}, {});
          auto sc = *n.addOp("ai.onnx::Mul", {d, f2[0]}, {});
          auto pr = conv(sc[0], b + ".project", 64, 16, 1, 1);
          s = (*n.addOp("ai.onnx::Add", {pr, s}, {}))[0];
        }
        EXPECT_TRUE(n.markOutput(s, "y").isOk());
      },
      {2, 16, 12, 12});
}
