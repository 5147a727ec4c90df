// Builder and runtime on the CPU: profiles, memory planning, aliasing, data-dependent shapes,
// reformats, plan files, concurrent contexts.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <fstream>
#include <thread>

#include "op_harness.h"

using namespace opforge;
using opforge::test::contribRegistry;

namespace {
std::vector<float> iota(size_t n, float start = 0.5f) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = start + static_cast<float>(i);
  return v;
}

// x[-1,3,4,4] -> circ_pad(1,1) -> add_(2) -> y
NetworkDefinition padAddNet() {
  NetworkDefinition net(contribRegistry());
  auto x = *net.addInput("x", DataType::kFloat32, {-1, 3, 4, 4});
  auto p =
      *net.addOp("example::circ_pad_plugin", {x}, {{"pads", std::vector<int32_t>{1, 1}}}, "pad");
  auto a = *net.addOp("sample::elemwise_add_plugin_", {p[0]}, {{"delta", int64_t{2}}}, "add");
  EXPECT_TRUE(net.markOutput(a[0], "y").isOk());
  return net;
}

BuilderConfig profile(int64_t lo, int64_t opt, int64_t hi) {
  BuilderConfig c;
  c.profiles.push_back(
      OptimizationProfile{}.set("x", {lo, 3, 4, 4}, {opt, 3, 4, 4}, {hi, 3, 4, 4}));
  return c;
}

std::shared_ptr<Engine> build(const NetworkDefinition& net, const BuilderConfig& cfg) {
  Builder b(contribRegistry());
  auto plan = b.buildSerializedNetwork(net, cfg);
  EXPECT_TRUE(plan.isOk()) << plan.status().message();
  auto e = Engine::loadMemory(std::move(*plan), "test.plan", contribRegistry());
  EXPECT_TRUE(e.isOk()) << e.status().message();
  return *e;
}

std::vector<float> runPadAdd(Engine& e, int64_t n) {
  auto ctx = std::move(e.createExecutionContext()).value();
  EXPECT_TRUE(ctx->setInputShape("x", {n, 3, 4, 4}).isOk());
  auto in = iota(n * 48);
  EXPECT_TRUE(ctx->setInput("x", in.data(), in.size() * 4).isOk());
  Status st = ctx->execute();
  EXPECT_TRUE(st.isOk()) << st.message();
  Tensor y = *ctx->output("y");
  EXPECT_EQ(y.desc.dims, (std::vector<int64_t>{n, 3, 4, 6}));
  return std::vector<float>(y.as<float>(), y.as<float>() + y.numel());
}

void expectPadAdd(const std::vector<float>& y, int64_t n) {
  auto in = iota(n * 48);
  for (int64_t r = 0; r < n * 12; ++r)
    for (int64_t j = 0; j < 6; ++j)
      ASSERT_EQ(y[r * 6 + j], in[r * 4 + (j + 3) % 4] + 2.f) << r << "," << j;
}
}  // namespace

TEST(Engine, DynamicShapesWithinAProfile) {
  auto e = build(padAddNet(), profile(1, 2, 8));
  for (int64_t n : {1, 2, 5, 8}) expectPadAdd(runPadAdd(*e, n), n);
}

TEST(Engine, ShapeOutsideTheProfileIsRefused) {
  auto e = build(padAddNet(), profile(1, 2, 8));
  auto ctx = std::move(e->createExecutionContext()).value();
  Status st = ctx->setInputShape("x", {9, 3, 4, 4});
  EXPECT_EQ(st.code(), StatusCode::kOutOfRange);
  EXPECT_NE(st.message().find("dimension 0 = 9 is outside optimization profile 0 [1, 8]"),
            std::string::npos)
      << st.message();
  Status rank = ctx->setInputShape("x", {2, 3, 4});
  EXPECT_NE(rank.message().find("rank 4"), std::string::npos) << rank.message();
  Status fixed = ctx->setInputShape("x", {2, 5, 4, 4});
  EXPECT_NE(fixed.message().find("fixed at 3"), std::string::npos) << fixed.message();
  EXPECT_FALSE(ctx->setInputShape("nope", {1}).isOk());
  // No shape set: a clear message.
  Status noshape = ctx->execute();
  EXPECT_NE(noshape.message().find("no shape yet"), std::string::npos) << noshape.message();
}

TEST(Engine, ProfilesAreValidated) {
  Builder b(contribRegistry());
  auto none = b.buildSerializedNetwork(padAddNet(), BuilderConfig{});
  ASSERT_FALSE(none.isOk());
  EXPECT_NE(none.status().message().find("dynamic dimensions"), std::string::npos);
  auto bad = b.buildSerializedNetwork(padAddNet(), profile(4, 2, 8));
  ASSERT_FALSE(bad.isOk());
  EXPECT_NE(bad.status().message().find("min <= opt <= max"), std::string::npos);
  BuilderConfig wrong;
  wrong.profiles.push_back(OptimizationProfile{}.set("x", {1, 3, 4}, {1, 3, 4}, {1, 3, 4}));
  auto r = b.buildSerializedNetwork(padAddNet(), wrong);
  ASSERT_FALSE(r.isOk());
  EXPECT_NE(r.status().message().find("rank 4"), std::string::npos) << r.status().message();
}

TEST(Engine, InPlaceOpsShareStorageAndInputsStayIntact) {
  // x -> add_(1) -> add_(2) -> y: the chain shares one buffer; x is copied once so that running
  // twice gives the same answer.
  NetworkDefinition net(contribRegistry());
  auto x = *net.addInput("x", DataType::kFloat32, {64});
  auto a = *net.addOp("sample::elemwise_add_plugin_", {x}, {{"delta", int64_t{1}}});
  auto b = *net.addOp("sample::elemwise_add_plugin_", {a[0]}, {{"delta", int64_t{2}}});
  ASSERT_TRUE(net.markOutput(b[0], "y").isOk());
  auto e = build(net, {});
  EXPECT_EQ(e->layers().size(), 3u);  // one copy + two in-place adds
  EXPECT_EQ(e->layers()[0].op, "opforge::Reformat v1");
  auto ctx = std::move(e->createExecutionContext()).value();
  auto in = iota(64);
  ASSERT_TRUE(ctx->setInput("x", in.data(), 256).isOk());
  for (int rep = 0; rep < 2; ++rep) {
    ASSERT_TRUE(ctx->execute().isOk());
    Tensor y = *ctx->output("y");
    for (int i = 0; i < 64; ++i) ASSERT_EQ(y.as<float>()[i], in[i] + 3.f);
  }
  // The chain (the input's copy and both adds) is one 256-byte buffer; the input has its own.
  EXPECT_EQ(ctx->activationBytes(), 256u);
}

TEST(Engine, InPlaceOnAValueStillNeededGetsACopy) {
  NetworkDefinition net(contribRegistry());
  auto x = *net.addInput("x", DataType::kFloat32, {16});
  auto p = *net.addOp("example::circ_pad_plugin", {x}, {{"pads", std::vector<int32_t>{0, 0}}});
  auto a = *net.addOp("sample::elemwise_add_plugin_", {p[0]}, {{"delta", int64_t{5}}});
  auto s = *net.addOp("ai.onnx::Add", {a[0], p[0]});  // p is read after the in-place add
  ASSERT_TRUE(net.markOutput(s[0], "y").isOk());
  auto e = build(net, {});
  auto ctx = std::move(e->createExecutionContext()).value();
  auto in = iota(16);
  ASSERT_TRUE(ctx->setInput("x", in.data(), 64).isOk());
  ASSERT_TRUE(ctx->execute().isOk());
  Tensor y = *ctx->output("y");
  for (int i = 0; i < 16; ++i) EXPECT_EQ(y.as<float>()[i], 2 * in[i] + 5.f);
}

TEST(Engine, MemoryIsReusedByLiveness) {
  // A chain of 6 pads on [1,1,64,64]: each buffer is about 17 KB; liveness needs two at a time.
  NetworkDefinition net(contribRegistry());
  auto t = *net.addInput("x", DataType::kFloat32, {1, 1, 64, 64});
  for (int i = 0; i < 6; ++i)
    t = (*net.addOp("example::circ_pad_plugin", {t}, {{"pads", std::vector<int32_t>{0, 0}}}))[0];
  ASSERT_TRUE(net.markOutput(t, "y").isOk());
  auto e = build(net, {});
  auto ctx = std::move(e->createExecutionContext()).value();
  std::vector<float> in(4096, 1.f);
  ASSERT_TRUE(ctx->setInput("x", in.data(), in.size() * 4).isOk());
  ASSERT_TRUE(ctx->execute().isOk());
  EXPECT_EQ(ctx->activationBytes(), 2u * 16384u);
}

TEST(Engine, DataDependentShapesFlowDownstream) {
  // non_zero -> Cast(indices to FP32) -> Mul by 2: downstream nodes see the real K.
  NetworkDefinition net(contribRegistry());
  auto x = *net.addInput("x", DataType::kFloat32, {4, 5});
  auto nz = *net.addOp("example::non_zero_plugin", {x});
  auto f = *net.addOp("ai.onnx::Cast", {nz[0]}, {{"to", int64_t{1}}});
  TensorValue two;
  two.desc = TensorDesc{DataType::kFloat32, {}};
  two.data.resize(4);
  float v2 = 2.f;
  std::memcpy(two.data.data(), &v2, 4);
  auto c = *net.addConstant("two", two);
  auto m = *net.addOp("ai.onnx::Mul", {f[0], c});
  ASSERT_TRUE(net.markOutput(m[0], "y").isOk());
  ASSERT_TRUE(net.markOutput(nz[1], "count").isOk());
  EXPECT_EQ(net.shapeOf(m[0]), "[non_zero_plugin_0#0, 2]");
  auto e = build(net, {});
  auto ctx = std::move(e->createExecutionContext()).value();
  std::vector<float> in(20, 0.f);
  in[3] = 1.f;
  in[7] = -2.f;
  in[19] = 5.f;
  ASSERT_TRUE(ctx->setInput("x", in.data(), 80).isOk());
  ASSERT_TRUE(ctx->execute().isOk());
  EXPECT_EQ(*ctx->shape("y"), (std::vector<int64_t>{3, 2}));
  Tensor y = *ctx->output("y");
  std::vector<float> got(y.as<float>(), y.as<float>() + 6);
  EXPECT_EQ(got, (std::vector<float>{0, 6, 2, 4, 6, 8}));
  EXPECT_EQ(*ctx->output("count")->as<int32_t>(), 3);
  // A second run with a different count.
  in.assign(20, 1.f);
  ASSERT_TRUE(ctx->setInput("x", in.data(), 80).isOk());
  ASSERT_TRUE(ctx->execute().isOk());
  EXPECT_EQ(*ctx->shape("y"), (std::vector<int64_t>{20, 2}));
}

TEST(Engine, ReformatsWhereNeighboursDisagree) {
  // The caller supplies x channels-last; circ_pad accepts LINEAR only: a reformat is inserted.
  NetworkDefinition net(contribRegistry());
  auto x = *net.addInput("x", DataType::kFloat32, {1, 2, 3, 4}, Format::kHWC);
  auto p = *net.addOp("example::circ_pad_plugin", {x}, {{"pads", std::vector<int32_t>{1, 0}}});
  ASSERT_TRUE(net.markOutput(p[0], "y").isOk());
  auto e = build(net, {});
  ASSERT_EQ(e->layers().size(), 2u);
  EXPECT_EQ(e->layers()[0].op, "opforge::Reformat v1");
  // logical x[0,c,h,w] = c*100 + h*10 + w, stored as HWC
  std::vector<float> hwc(24);
  for (int c = 0; c < 2; ++c)
    for (int h = 0; h < 3; ++h)
      for (int w = 0; w < 4; ++w) hwc[(h * 4 + w) * 2 + c] = c * 100.f + h * 10.f + w;
  auto ctx = std::move(e->createExecutionContext()).value();
  ASSERT_TRUE(ctx->setInput("x", hwc.data(), 96).isOk());
  ASSERT_TRUE(ctx->execute().isOk());
  Tensor y = *ctx->output("y");
  ASSERT_EQ(y.desc.dims, (std::vector<int64_t>{1, 2, 3, 5}));
  for (int c = 0; c < 2; ++c)
    for (int h = 0; h < 3; ++h)
      for (int w = 0; w < 5; ++w)
        EXPECT_EQ(y.as<float>()[(c * 3 + h) * 5 + w], c * 100.f + h * 10.f + (w + 3) % 4);

  // The in-place add accepts HWC: no reformat before it, but one after (outputs are LINEAR).
  NetworkDefinition net2(contribRegistry());
  auto x2 = *net2.addInput("x", DataType::kFloat32, {1, 2, 3, 4}, Format::kHWC);
  auto a = *net2.addOp("sample::elemwise_add_plugin_", {x2}, {{"delta", int64_t{1}}}, "add");
  ASSERT_TRUE(net2.markOutput(a[0], "y").isOk());
  auto e2 = build(net2, {});
  std::vector<std::string> ops;
  for (const auto& l : e2->layers()) ops.push_back(l.name);
  ASSERT_EQ(e2->layers().size(), 3u) << e2->inspect();  // copy (input stays intact), add, reformat
  EXPECT_EQ(e2->layers()[1].name, "add");
  EXPECT_NE(e2->layers()[1].combo.find("FP32:HWC, FP32:HWC"), std::string::npos)
      << e2->layers()[1].combo;
  auto ctx2 = std::move(e2->createExecutionContext()).value();
  ASSERT_TRUE(ctx2->setInput("x", hwc.data(), 96).isOk());
  ASSERT_TRUE(ctx2->execute().isOk());
  Tensor y2 = *ctx2->output("y");
  EXPECT_EQ(y2.desc.format, Format::kLinear);
  for (int c = 0; c < 2; ++c)
    for (int h = 0; h < 3; ++h)
      for (int w = 0; w < 4; ++w)
        EXPECT_EQ(y2.as<float>()[(c * 3 + h) * 4 + w], c * 100.f + h * 10.f + w + 1);
}

TEST(Engine, TypeCombinationsAreEnforced) {
  NetworkDefinition net(contribRegistry());
  auto x = *net.addInput("x", DataType::kInt32, {2, 4});
  auto p =
      *net.addOp("example::circ_pad_plugin", {x}, {{"pads", std::vector<int32_t>{1, 1}}}, "pad");
  ASSERT_TRUE(net.markOutput(p[0], "y").isOk());
  Builder b(contribRegistry());
  auto r = b.buildSerializedNetwork(net, {});
  ASSERT_FALSE(r.isOk());
  EXPECT_NE(r.status().message().find("node 'pad'"), std::string::npos) << r.status().message();
  EXPECT_NE(r.status().message().find("INT32"), std::string::npos);
  EXPECT_NE(r.status().message().find("FP16, FP16"), std::string::npos);
}

TEST(Engine, FP16AndBF16RunThroughTheReference) {
  for (DataType t : {DataType::kFloat16, DataType::kBFloat16}) {
    NetworkDefinition net(contribRegistry());
    auto x = *net.addInput("x", t, {2, 3});
    auto p = *net.addOp("example::circ_pad_plugin", {x}, {{"pads", std::vector<int32_t>{1, 0}}});
    ASSERT_TRUE(net.markOutput(p[0], "y").isOk());
    auto e = build(net, {});
    auto ctx = std::move(e->createExecutionContext()).value();
    std::vector<uint16_t> in(6);
    for (int i = 0; i < 6; ++i)
      in[i] = t == DataType::kFloat16 ? floatToHalf(i + 0.5f) : floatToBf16(i + 0.5f);
    ASSERT_TRUE(ctx->setInput("x", in.data(), 12).isOk());
    ASSERT_TRUE(ctx->execute().isOk());
    Tensor y = *ctx->output("y");
    EXPECT_EQ(y.desc.dtype, t);
    EXPECT_EQ(y.as<uint16_t>()[0], in[2]);
    EXPECT_EQ(y.as<uint16_t>()[1], in[0]);
  }
}

TEST(Engine, SeveralContextsRunAtOnce) {
  auto e = build(padAddNet(), profile(1, 4, 8));
  std::vector<std::thread> threads;
  std::atomic<int> failures{0};
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&, t] {
      for (int rep = 0; rep < 50; ++rep) {
        int64_t n = 1 + (t + rep) % 8;
        auto y = runPadAdd(*e, n);
        auto in = iota(n * 48);
        for (int64_t r = 0; r < n * 12; ++r)
          for (int64_t j = 0; j < 6; ++j)
            if (y[r * 6 + j] != in[r * 4 + (j + 3) % 4] + 2.f) ++failures;
      }
    });
  for (auto& th : threads) th.join();
  EXPECT_EQ(failures.load(), 0);
}

TEST(Engine, BuildLoadAndRunInThreads) {
  // What ThreadSanitizer looks at (docs/fuzzing.md): threads that at the same time load the op
  // library again, build and load their own plans, and keep one context each on a shared engine,
  // changing its shape every run (re-planning the arena), beside short-lived contexts.
  auto shared = build(padAddNet(), profile(1, 4, 8));
  std::vector<std::thread> threads;
  std::atomic<int> failures{0};
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&, t] {
      if (Status st = Registry::global()->loadLibrary(test::contribLibrary()); !st) {
        ADD_FAILURE() << "thread " << t << ": " << st.message();
        ++failures;
      }
      auto own = build(padAddNet(), profile(1, 2, 4));
      auto kept = std::move(shared->createExecutionContext()).value();
      for (int rep = 0; rep < 20; ++rep) {
        const int64_t n = 1 + (t + rep) % 4;
        Engine& e = rep % 2 ? *own : *shared;
        auto y = runPadAdd(e, n);
        auto in = iota(n * 48);
        if (!kept->setInputShape("x", {n, 3, 4, 4}).isOk() ||
            !kept->setInput("x", in.data(), in.size() * 4).isOk() || !kept->execute().isOk()) {
          ADD_FAILURE() << "thread " << t << ", run " << rep << ": the kept context failed";
          ++failures;
          continue;
        }
        const float* k = kept->output("y")->as<float>();
        for (int64_t r = 0; r < n * 12; ++r)
          for (int64_t j = 0; j < 6; ++j) {
            const float want = in[r * 4 + (j + 3) % 4] + 2.f;
            if (y[r * 6 + j] != want || k[r * 6 + j] != want) {
              ADD_FAILURE() << "thread " << t << ", run " << rep << ", n " << n << " at " << r
                            << "," << j << ": " << y[r * 6 + j] << " / " << k[r * 6 + j]
                            << ", want " << want;
              ++failures;
            }
          }
      }
    });
  for (auto& th : threads) th.join();
  EXPECT_EQ(failures.load(), 0);
}

TEST(Engine, InputErrors) {
  auto e = build(padAddNet(), profile(1, 2, 8));
  auto ctx = std::move(e->createExecutionContext()).value();
  ASSERT_TRUE(ctx->setInputShape("x", {2, 3, 4, 4}).isOk());
  std::vector<float> in(10);
  Status st = ctx->setInput("x", in.data(), 40);
  EXPECT_NE(st.message().find("384 bytes; got 40"), std::string::npos) << st.message();
  Status nodata = ctx->execute();
  EXPECT_NE(nodata.message().find("has no data"), std::string::npos) << nodata.message();
  EXPECT_FALSE(ctx->output("y").isOk());
}

// x [2, 8] -> circ_pad (1, 1) named `first` -> in-place add 3 ("add") -> circ_pad (0, 1) ("pad2")
// -> y
static NetworkDefinition padAddPadNet(const std::string& first) {
  NetworkDefinition net(contribRegistry());
  auto x = *net.addInput("x", DataType::kFloat32, {2, 8});
  auto p =
      *net.addOp("example::circ_pad_plugin", {x}, {{"pads", std::vector<int32_t>{1, 1}}}, first);
  auto a = *net.addOp("sample::elemwise_add_plugin_", {p[0]}, {{"delta", int64_t{3}}}, "add");
  auto q = *net.addOp("example::circ_pad_plugin", {a[0]}, {{"pads", std::vector<int32_t>{0, 1}}},
                      "pad2");
  EXPECT_TRUE(net.markOutput(q[0], "y").isOk());
  return net;
}

TEST(Engine, Fp16KeepsPinnedLayersInFp32) {
  // --layerPrecisions: a node-name glob and an op name keep their layers in FP32, casts around
  // them.
  NetworkDefinition net = padAddPadNet("stem/pad");
  BuilderConfig cfg;
  cfg.fp16 = true;
  cfg.fp32_layers = {"stem/*"};
  auto e = build(net, cfg);
  auto layers = e->layers();
  ASSERT_EQ(layers.size(), 5u) << e->inspect();  // pad (FP32), cast, add, pad2 (FP16), cast back
  EXPECT_EQ(layers[0].name, "stem/pad");
  EXPECT_EQ(layers[0].combo, "FP32, FP32");
  EXPECT_EQ(layers[2].combo, "FP16, FP16");
  cfg.fp32_layers = {"elemwise_add_plugin_", "pad2"};  // an op name and an exact node name
  auto e2 = build(net, cfg);
  auto l2 = e2->layers();
  int fp32 = 0;
  for (const auto& l : l2)
    if (l.name == "add" || l.name == "pad2") fp32 += l.combo == "FP32, FP32";
  EXPECT_EQ(fp32, 2) << e2->inspect();
}

TEST(Engine, Fp16ConvertsWeightsWhenBuilding) {
  // A weight read in FP16 is stored in FP16 by the builder: no cast of it runs at inference.
  NetworkDefinition net(contribRegistry());
  auto x = *net.addInput("x", DataType::kFloat32, {2, 4});
  TensorValue w;
  w.desc = TensorDesc{DataType::kFloat32, {4, 3}};
  w.data.resize(w.desc.bytes());
  for (int i = 0; i < 12; ++i)
    reinterpret_cast<float*>(w.data.data())[i] = 0.37f * static_cast<float>(i) - 2.01f;
  auto wc = *net.addConstant("W", w);
  auto y = *net.addOp("ai.onnx::MatMul", {x, wc}, {}, "mm");
  ASSERT_TRUE(net.markOutput(y[0], "y").isOk());
  BuilderConfig cfg;
  cfg.fp16 = true;
  auto e = build(net, cfg);
  auto layers = e->layers();
  ASSERT_EQ(layers.size(), 3u)
      << e->inspect();  // cast x, mm (FP16), cast y: W was converted when building
  EXPECT_EQ(layers[1].name, "mm");
  EXPECT_EQ(layers[1].combo, "FP16, FP16, FP16") << e->inspect();
  auto ctx = std::move(e->createExecutionContext()).value();
  std::vector<float> in(8);
  for (int i = 0; i < 8; ++i) in[i] = 0.3f * static_cast<float>(i) - 1.1f;
  ASSERT_TRUE(ctx->setInput("x", in.data(), 32).isOk());
  ASSERT_TRUE(ctx->execute().isOk());
  Tensor out = *ctx->output("y");
  auto h = [](float v) { return halfToFloat(floatToHalf(v)); };
  for (int r = 0; r < 2; ++r)
    for (int c = 0; c < 3; ++c) {
      double acc = 0;
      for (int k = 0; k < 4; ++k)
        acc +=
            double(h(in[r * 4 + k])) * h(reinterpret_cast<const float*>(w.data.data())[k * 3 + c]);
      EXPECT_EQ(out.as<float>()[r * 3 + c], h(static_cast<float>(acc))) << r << "," << c;
    }
}

TEST(Engine, Fp16KeepsTinyWeightsNonzeroAndHugeOnesFinite) {
  // As TensorRT converts weights: a nonzero constant below FP16's smallest subnormal becomes that
  // subnormal, not 0 (F.normalize's x / Clip(norm, 1e-12) would give 0 / 0 = NaN for a zero row),
  // and a finite one beyond FP16's range becomes 65504, not inf (0 * inf = NaN in a product).
  NetworkDefinition net(contribRegistry());
  auto x = *net.addInput("x", DataType::kFloat32, {2, 4});
  auto scalar = [](float v, std::vector<int64_t> dims) {
    TensorValue t;
    t.desc = TensorDesc{DataType::kFloat32, std::move(dims)};
    t.data.resize(t.desc.bytes());
    for (size_t i = 0; i < t.data.size() / 4; ++i) reinterpret_cast<float*>(t.data.data())[i] = v;
    return t;
  };
  auto eps = *net.addConstant("eps", scalar(1e-12f, {}));
  auto clip = *net.addOp("ai.onnx::Clip", {x, eps}, {}, "clip");
  auto div = *net.addOp("ai.onnx::Div", {x, clip[0]}, {}, "normalize");
  TensorValue w = scalar(0.5f, {4, 1});
  reinterpret_cast<float*>(w.data.data())[0] = 1e5f;
  auto wc = *net.addConstant("W", w);
  auto mm = *net.addOp("ai.onnx::MatMul", {x, wc}, {}, "mm");
  ASSERT_TRUE(net.markOutput(div[0], "y").isOk());
  ASSERT_TRUE(net.markOutput(mm[0], "z").isOk());
  BuilderConfig cfg;
  cfg.fp16 = true;
  std::string log;
  cfg.log = [&](const std::string& m) { log += m + "\n"; };
  auto e = build(net, cfg);
  EXPECT_NE(log.find("constant 'eps' converted to FP16 for layer 'clip': 1 value(s) below FP16's "
                     "smallest subnormal"),
            std::string::npos)
      << log;
  EXPECT_NE(log.find("constant 'W' converted to FP16 for layer 'mm': 1 value(s) beyond FP16's "
                     "range (the largest 100000) became +-65504"),
            std::string::npos)
      << log;
  auto ctx = std::move(e->createExecutionContext()).value();
  const std::vector<float> in{0, 0, 0.5f, 0.25f, 0, 1, 0, 2};  // x[:, 0] = 0 meets W's 1e5
  ASSERT_TRUE(ctx->setInput("x", in.data(), 32).isOk());
  ASSERT_TRUE(ctx->execute().isOk());
  Tensor y = *ctx->output("y"), z = *ctx->output("z");
  for (int i = 0; i < 8; ++i) EXPECT_EQ(y.as<float>()[i], in[i] == 0 ? 0.f : 1.f) << i;
  EXPECT_EQ(z.as<float>()[0], 0.375f);  // 0 * 65504 + 0.5 * (0 + 0.5 + 0.25)
  EXPECT_EQ(z.as<float>()[1], 1.5f);
}

TEST(Engine, Fp16LoweringInsertsCastsOnlyAtTheBoundaries) {
  NetworkDefinition net = padAddPadNet("pad");
  BuilderConfig cfg;
  cfg.fp16 = true;
  auto e = build(net, cfg);
  auto layers = e->layers();
  ASSERT_EQ(layers.size(), 5u) << e->inspect();  // cast in, pad, add, pad2, cast out
  EXPECT_EQ(layers[0].combo, "FP32:LINEAR -> FP16:LINEAR");
  EXPECT_EQ(layers[1].combo, "FP16, FP16");
  EXPECT_EQ(layers[2].combo, "FP16, FP16");
  EXPECT_EQ(layers[3].combo, "FP16, FP16");
  EXPECT_EQ(layers[4].combo, "FP16:LINEAR -> FP32:LINEAR");
  EXPECT_EQ(e->ioTensors()[1].dtype, DataType::kFloat32);  // the network's types stay
  auto ctx = std::move(e->createExecutionContext()).value();
  std::vector<float> in(16);
  for (int i = 0; i < 16; ++i) in[i] = 0.1f * i + 0.01f;
  ASSERT_TRUE(ctx->setInput("x", in.data(), 64).isOk());
  ASSERT_TRUE(ctx->execute().isOk());
  Tensor y = *ctx->output("y");
  ASSERT_EQ(y.desc.dims, (std::vector<int64_t>{2, 11}));
  for (int r = 0; r < 2; ++r)
    for (int j = 0; j < 11; ++j) {
      // pad: [x7, x0..x7, x0], pad2 appends column 0 of that: x7
      static const int src[11] = {7, 0, 1, 2, 3, 4, 5, 6, 7, 0, 7};
      float expect = halfToFloat(floatToHalf(halfToFloat(floatToHalf(in[r * 8 + src[j]])) + 3.f));
      EXPECT_EQ(y.as<float>()[r * 11 + j], expect) << r << "," << j;
    }
  // Without --fp16 the layers keep FP32 and there are no casts.
  auto e32 = build(net, {});
  EXPECT_EQ(e32->layers().size(), 3u);
}

namespace {
// A run-time op of one 16-bit float type: y = -x (the sign bit flipped).
OpDef negateOnly(const std::string& key, const char* type) {
  OpDef d(key);
  d.input("x")
      .output("y")
      .shape([](ShapeContext& c) -> Result<SymDesc> { return c.input(0).like(); })
      .combos(std::string(type) + ", " + type)
      .cpu([](KernelContext&, std::span<const Tensor> in, std::span<const Tensor> out) {
        for (int64_t i = 0; i < in[0].numel(); ++i)
          static_cast<uint16_t*>(out[0].data)[i] =
              static_cast<const uint16_t*>(in[0].data)[i] ^ uint16_t { 0x8000 };
        return Status::ok();
      });
  return d;
}
}  // namespace

TEST(Engine, ALayerReadsTheReducedOriginalNotTheCastBack) {
  // With --fp16 and --bf16, an FP16-only layer feeds a BF16-only one: the second reads one
  // reformat of the FP16 value (FP16 -> BF16), not a conversion of the FP16 -> FP32 cast back,
  // which nobody reads and the plan drops.
  auto reg = Registry::create();
  std::vector<OpDef> defs;
  defs.push_back(negateOnly("rt::neg_h", "FP16"));
  defs.push_back(negateOnly("rt::neg_b", "BF16"));
  ASSERT_TRUE(reg->addOps("test", std::move(defs)).isOk());
  NetworkDefinition net(reg);
  auto x = *net.addInput("x", DataType::kFloat32, {2, 5});
  auto h = *net.addOp("rt::neg_h", {x}, {}, "h");
  auto b = *net.addOp("rt::neg_b", {h[0]}, {}, "b");
  ASSERT_TRUE(net.markOutput(b[0], "y").isOk());
  BuilderConfig cfg;
  cfg.fp16 = cfg.bf16 = true;
  auto plan = Builder(reg).buildSerializedNetwork(net, cfg);
  ASSERT_TRUE(plan.isOk()) << plan.status().message();
  auto loaded = Engine::loadMemory(std::move(*plan), "test.plan", reg);
  ASSERT_TRUE(loaded.isOk()) << loaded.status().message();
  auto e = *loaded;
  auto layers = e->layers();
  ASSERT_EQ(layers.size(), 5u) << e->inspect();  // cast in, h, FP16 -> BF16, b, cast out
  EXPECT_EQ(layers[0].combo, "FP32:LINEAR -> FP16:LINEAR");
  EXPECT_EQ(layers[1].name, "h");
  EXPECT_EQ(layers[2].combo, "FP16:LINEAR -> BF16:LINEAR") << e->inspect();
  EXPECT_EQ(layers[3].name, "b");
  EXPECT_EQ(layers[4].combo, "BF16:LINEAR -> FP32:LINEAR");
  auto ctx = std::move(e->createExecutionContext()).value();
  std::vector<float> in(10);
  for (int i = 0; i < 10; ++i) in[i] = 0.37f * static_cast<float>(i) - 1.7f;
  ASSERT_TRUE(ctx->setInput("x", in.data(), 40).isOk());
  ASSERT_TRUE(ctx->execute().isOk());
  Tensor y = *ctx->output("y");
  for (int i = 0; i < 10; ++i)
    EXPECT_EQ(y.as<float>()[i], bf16ToFloat(floatToBf16(halfToFloat(floatToHalf(in[i])))))
        << i;  // negated twice
}

TEST(Engine, CpuBuildsSkipCombinationsOfCudaOnlyTactics) {
  // FusedConv declares a channels-last combination that only its CUDA graph-API tactics take. A CPU
  // build whose inputs x and z arrive channels-last would prefer it (fewer reformats) but must not
  // choose it (the CPU reference reads LINEAR): the inputs are reformatted and the layer runs
  // LINEAR, with the reference's result.
  NetworkDefinition net(contribRegistry());
  auto x = *net.addInput("x", DataType::kFloat32, {1, 2, 3, 3}, Format::kHWC);
  auto z = *net.addInput("z", DataType::kFloat32, {1, 1, 3, 3}, Format::kHWC);
  TensorValue w;
  w.desc = TensorDesc{DataType::kFloat32, {1, 2, 1, 1}};
  w.data.resize(w.desc.bytes());
  reinterpret_cast<float*>(w.data.data())[0] = 2.f;  // y = 2 * x[c=0] - x[c=1] + z
  reinterpret_cast<float*>(w.data.data())[1] = -1.f;
  auto wc = *net.addConstant("W", w);
  auto y = *net.addOp("opforge::FusedConv", {x, wc, TensorRef{}, z}, {}, "conv");
  ASSERT_TRUE(net.markOutput(y[0], "y").isOk());
  auto e = build(net, {});
  std::string conv_combo;
  for (const auto& l : e->layers())
    if (l.name == "conv") conv_combo = l.combo;
  EXPECT_EQ(conv_combo.find("HWC"), std::string::npos) << e->inspect();
  std::vector<float> hwc(18),
      zv(9);  // logical x[0,c,h,w] = c*10 + h*3 + w + 1, stored channels-last
  for (int c = 0; c < 2; ++c)
    for (int p = 0; p < 9; ++p) hwc[p * 2 + c] = c * 10.f + p + 1.f;
  for (int p = 0; p < 9; ++p) zv[p] = 0.5f * p;
  auto ctx = std::move(e->createExecutionContext()).value();
  ASSERT_TRUE(ctx->setInput("x", hwc.data(), 72).isOk());
  ASSERT_TRUE(ctx->setInput("z", zv.data(), 36).isOk());
  ASSERT_TRUE(ctx->execute().isOk());
  Tensor out = *ctx->output("y");
  ASSERT_EQ(out.desc.dims, (std::vector<int64_t>{1, 1, 3, 3}));
  for (int p = 0; p < 9; ++p)
    EXPECT_EQ(out.as<float>()[p], 2.f * (p + 1.f) - (10.f + p + 1.f) + 0.5f * p) << p;
}

// CPU plans run on the host device: caller memory binds like device memory on a GPU, inputs
// stay put across runs, the run's times and per-layer times come from the same events.
TEST(Engine, CpuPlansBindCallerMemoryAndProfileLikeCudaPlans) {
  auto e = build(padAddNet(), profile(1, 2, 4));
  auto ctx = std::move(e->createExecutionContext()).value();
  ASSERT_TRUE(ctx->setInputShape("x", {2, 3, 4, 4}).isOk());
  auto in = iota(2 * 48);
  ASSERT_TRUE(ctx->setInput("x", in.data(), in.size() * 4).isOk());
  ctx->setDebugPoison(true);
  ctx->setProfiling(true);
  for (int rep = 0; rep < 2; ++rep) {  // the input is set once; the second run reads it again
    ASSERT_TRUE(ctx->execute().isOk());
    Tensor y = *ctx->output("y");
    EXPECT_EQ(y.device, Device::kCpu);
    expectPadAdd(std::vector<float>(y.as<float>(), y.as<float>() + y.numel()), 2);
    Tensor d = *ctx->deviceOutput("y");
    EXPECT_EQ(d.device, Device::kCpu);
    EXPECT_EQ(d.data, y.data);
    ASSERT_EQ(ctx->layerTimes().size(), e->layers().size());
    for (const auto& t : ctx->layerTimes()) EXPECT_GE(t.ms, 0.0) << t.name;
    EXPECT_FALSE(ctx->lastRunTimes().cuda_graph);
    EXPECT_GE(ctx->lastRunTimes().compute_ms, 0.0);
  }
  // Caller-owned host memory for the input and the output: no copies, and output() refuses a
  // bound tensor.
  std::vector<float> x2 = iota(2 * 48), y2(2 * 3 * 4 * 6, -1.f);
  ASSERT_TRUE(ctx->setTensorAddress("x", x2.data()).isOk());
  ASSERT_TRUE(ctx->setTensorAddress("y", y2.data()).isOk());
  ASSERT_TRUE(ctx->execute().isOk());
  expectPadAdd(y2, 2);
  EXPECT_EQ(x2, iota(2 * 48));  // inputs are never written
  auto refused = ctx->output("y");
  ASSERT_FALSE(refused.isOk());
  EXPECT_NE(refused.status().message().find("setTensorAddress"), std::string::npos);
  ASSERT_TRUE(ctx->setTensorAddress("y", nullptr).isOk());
  ASSERT_TRUE(ctx->execute().isOk());
  Tensor y = *ctx->output("y");
  expectPadAdd(std::vector<float>(y.as<float>(), y.as<float>() + y.numel()), 2);
  EXPECT_FALSE(ctx->setTensorAddress("nope", x2.data()).isOk());
}

namespace {
// y = 2x on FP32, 3 ms slower when `slow`: two CPU tactics the host autotuner tells apart.
KernelFn twice(bool slow) {
  return [slow](KernelContext&, std::span<const Tensor> in, std::span<const Tensor> out) {
    if (slow) std::this_thread::sleep_for(std::chrono::milliseconds(3));
    for (int64_t i = 0; i < in[0].numel(); ++i)
      static_cast<float*>(out[0].data)[i] = 2 * static_cast<const float*>(in[0].data)[i];
    return Status::ok();
  };
}

// A registry holding `key`: y = 2x with a slow reference and a fast second CPU tactic (TF32-marked
// when `tf32`; ids 0 and 1 << 30 | 1, as opforge.plugin's autotune makes them).
std::shared_ptr<Registry> twoTacticRegistry(const std::string& key, bool tf32) {
  auto reg = Registry::create();
  std::vector<OpDef> defs;
  OpDef& d = defs.emplace_back(key);
  d.input("x").output("y").shape(
      [](ShapeContext& c) -> Result<SymDesc> { return c.input(0).like(); });
  d.cpu(twice(true));
  if (tf32)
    d.kind("gemm").tf32Tactic((1 << 30) | 1, "cpu.fast.tf32", twice(false));
  else
    d.tactic((1 << 30) | 1, "cpu.fast", twice(false));
  EXPECT_TRUE(reg->addOps("test:engine_test", std::move(defs)).isOk());
  return reg;
}
}  // namespace

TEST(CpuBuild, Tf32TacticsAreCandidatesOnlyWhenTheBuildAllowsThem) {
  // A TF32 tactic (TacticDef::tf32) that is the faster one: taken by default (BuilderConfig::tf32,
  // as TensorRT's kTF32), never with tf32 = false (`opforge exec --noTF32`). The layer reports the
  // op's kind.
  auto reg = twoTacticRegistry("rt::tf32_cpu", true);
  EXPECT_TRUE(reg->find("rt::tf32_cpu")->schema().tactics[1].tf32);
  for (bool tf32 : {true, false}) {
    NetworkDefinition net(reg);
    auto x = *net.addInput("x", DataType::kFloat32, {8});
    auto y = *net.addOp("rt::tf32_cpu", {x}, {}, "twice");
    ASSERT_TRUE(net.markOutput(y[0], "y").isOk());
    BuilderConfig cfg;
    cfg.tf32 = tf32;
    auto plan = Builder(reg).buildSerializedNetwork(net, cfg);
    ASSERT_TRUE(plan.isOk()) << plan.status().message();
    auto e = Engine::loadMemory(std::move(*plan), "tf32.plan", reg);
    ASSERT_TRUE(e.isOk()) << e.status().message();
    EXPECT_EQ((*e)->layers()[0].tactic, tf32 ? "1073741825 (cpu.fast.tf32)" : "0 (cpu.reference)")
        << "tf32 = " << tf32;
    EXPECT_EQ((*e)->layers()[0].kind, "gemm");
  }
}

TEST(CpuBuild, TimesAnOpsCpuTacticsAndKeepsTheFastest) {
  // An op with two CPU tactics: a CPU build times both on the host and keeps the faster; ops with
  // one CPU tactic run it.
  auto reg = twoTacticRegistry("rt::two_cpu", false);
  EXPECT_EQ(reg->find("rt::two_cpu")->schema().tactics[1].backend, Backend::kCpu);
  NetworkDefinition net(reg);
  auto x = *net.addInput("x", DataType::kFloat32, {8});
  auto y = *net.addOp("rt::two_cpu", {x}, {}, "twice");
  ASSERT_TRUE(net.markOutput(y[0], "y").isOk());
  std::vector<std::string> log;
  BuilderConfig cfg;
  cfg.log = [&](const std::string& m) { log.push_back(m); };
  auto plan = Builder(reg).buildSerializedNetwork(net, cfg);
  ASSERT_TRUE(plan.isOk()) << plan.status().message();
  auto e = Engine::loadMemory(std::move(*plan), "two.plan", reg);
  ASSERT_TRUE(e.isOk()) << e.status().message();
  EXPECT_EQ((*e)->layers()[0].tactic, "1073741825 (cpu.fast)");
  EXPECT_EQ((*e)->layers()[0].library, "test:engine_test");
  bool logged = false;
  for (const auto& m : log)
    logged |= m.find("timed 2 CPU tactics for 1 layers") != std::string::npos;
  EXPECT_TRUE(logged);
  auto ctx = std::move((*e)->createExecutionContext()).value();
  auto in = iota(8);
  ASSERT_TRUE(ctx->setInput("x", in.data(), in.size() * 4).isOk());
  ASSERT_TRUE(ctx->execute().isOk());
  EXPECT_EQ(static_cast<const float*>(ctx->output("y")->data)[3], 2 * in[3]);
}

namespace {
// rt::repeat_rows: y = tile(x * scale, reps along dim 0). `reps` serves only the shape rule, so
// with `plan_attrs` the op's plans keep only `scale` (TensorRT's rule for JIT Python plugins).
std::shared_ptr<Registry> repeatRowsRegistry(bool plan_attrs,
                                             std::vector<std::string> keep = {"scale"}) {
  auto reg = Registry::create();
  std::vector<OpDef> defs;
  OpDef& d = defs.emplace_back("rt::repeat_rows");
  d.input("x").output("y").attr<int64_t>("build_only_reps").attr<double>("scale", 1.0);
  d.shape([](ShapeContext& c) -> Result<SymDesc> {
    SymDesc y = c.input(0).like();
    y.dims[0] = y.dims[0] * DimExpr(c.attr<int64_t>("build_only_reps"));
    return y;
  });
  d.cpu([](KernelContext& k, std::span<const Tensor> in, std::span<const Tensor> out) {
    if (k.attrs().has("build_only_reps"))
      return Status::internal("the kernel was given an attribute the plan must not keep");
    const float s = k.attr<float>("scale");
    const int64_t n = in[0].numel(), m = out[0].numel();
    for (int64_t i = 0; i < m; ++i)
      static_cast<float*>(out[0].data)[i] = s * static_cast<const float*>(in[0].data)[i % n];
    return Status::ok();
  });
  if (plan_attrs) d.planAttrs(std::move(keep));
  EXPECT_TRUE(reg->addOps("test:engine_test", std::move(defs)).isOk());
  return reg;
}

Result<std::vector<uint8_t>> repeatRowsPlan(const std::shared_ptr<Registry>& reg) {
  NetworkDefinition net(reg);
  auto x = *net.addInput("x", DataType::kFloat32, {-1, 4});
  auto y =
      net.addOp("rt::repeat_rows", {x}, {{"build_only_reps", int64_t{3}}, {"scale", 2.0}}, "rep");
  if (!y) return y.status();
  OPFORGE_RETURN_IF_ERROR(net.markOutput((*y)[0], "y"));
  BuilderConfig cfg;
  cfg.profiles.push_back(OptimizationProfile{}.set("x", {1, 4}, {2, 4}, {5, 4}));
  return Builder(reg).buildSerializedNetwork(net, cfg);
}

bool holds(const std::vector<uint8_t>& bytes, const std::string& text) {
  return std::search(bytes.begin(), bytes.end(), text.begin(), text.end()) != bytes.end();
}
}  // namespace

TEST(PlanAttrs, APlanKeepsOnlyTheDeclaredAttributesAndRunsWithoutTheShapeRule) {
  auto reg = repeatRowsRegistry(true);
  auto plan = repeatRowsPlan(reg);
  ASSERT_TRUE(plan.isOk()) << plan.status().message();
  EXPECT_FALSE(holds(*plan, "build_only_reps"));
  EXPECT_TRUE(holds(*plan, "scale"));
  auto e = Engine::loadMemory(*plan, "rep.plan", reg);
  ASSERT_TRUE(e.isOk()) << e.status().message();
  auto ctx = std::move((*e)->createExecutionContext()).value();
  for (int64_t n : {1, 5}) {  // the plan's own expression sizes y (x.0 * 3), at two shapes
    auto in = iota(n * 4);
    ASSERT_TRUE(ctx->setInputShape("x", {n, 4}).isOk());
    ASSERT_TRUE(ctx->setInput("x", in.data(), in.size() * 4).isOk());
    ASSERT_TRUE(ctx->execute().isOk());
    auto y = ctx->output("y");
    ASSERT_TRUE(y.isOk()) << y.status().message();
    ASSERT_EQ(y->desc.dims, (std::vector<int64_t>{3 * n, 4}));
    for (int64_t i = 0; i < 3 * n * 4; ++i)
      ASSERT_EQ(static_cast<const float*>(y->data)[i], 2 * in[i % (n * 4)]) << "n " << n;
  }
}

TEST(PlanAttrs, LoadingRefusesAPlanThatDoesNotMatchTheOpsRule) {
  // Built where the op keeps one attribute, loaded where it keeps all: the required one is missing.
  auto partial = repeatRowsPlan(repeatRowsRegistry(true));
  ASSERT_TRUE(partial.isOk()) << partial.status().message();
  auto e = Engine::loadMemory(*partial, "partial.plan", repeatRowsRegistry(false));
  ASSERT_FALSE(e.isOk());
  EXPECT_NE(e.status().message().find("required attribute 'build_only_reps'"), std::string::npos)
      << e.status().message();
  EXPECT_NE(e.status().message().find("partial.plan"), std::string::npos) << e.status().message();
  // Built with every attribute, loaded where the op keeps only `scale`: a plan opforge would not
  // write (edited, or from another definition) is refused, naming the attribute.
  auto full = repeatRowsPlan(repeatRowsRegistry(false));
  ASSERT_TRUE(full.isOk()) << full.status().message();
  EXPECT_TRUE(holds(*full, "build_only_reps"));
  e = Engine::loadMemory(*full, "full.plan", repeatRowsRegistry(true));
  ASSERT_FALSE(e.isOk());
  EXPECT_EQ(e.status().code(), StatusCode::kCorrupt);
  EXPECT_NE(e.status().message().find("stores attribute 'build_only_reps', which plans of this op "
                                      "do not keep (they keep scale)"),
            std::string::npos)
      << e.status().message();
}

TEST(PlanAttrs, TheRegistryRefusesAKeptAttributeTheOpDoesNotDeclare) {
  auto reg = Registry::create();
  std::vector<OpDef> defs;
  defs.emplace_back("rt::bad_keep")
      .input("x")
      .output("y")
      .attr<double>("scale", 1.0)
      .shape([](ShapeContext& c) -> Result<SymDesc> { return c.input(0).like(); })
      .cpu(twice(false))
      .planAttrs({"scale", "nope"});
  Status st = reg->addOps("test:engine_test", std::move(defs));
  ASSERT_FALSE(st.isOk());
  EXPECT_NE(st.message().find("planAttrs names 'nope', which is not one of its attributes"),
            std::string::npos)
      << st.message();
}
