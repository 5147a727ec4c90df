// ai.onnx::TensorScatter on the CPU: a hand-checked cache update in both modes; random shapes,
// axes, modes and types against the ONNX pseudocode written here (and the engine path, through
// checkOp); in place on an intermediate cache and with a copy where the cache is still needed;
// bad input named with the node, the op, the attribute or input and the value; bad write indices
// a run-time error with the values, never a write outside the cache.
#include <gtest/gtest.h>

#include <random>

#include "op_harness.h"
#include "opforge/device.h"

using namespace opforge;
using namespace opforge::test;

namespace {

const char* kTs = "ai.onnx::TensorScatter";

Attrs attrs(const std::string& mode, int64_t axis) {
  return {{"mode", mode}, {"axis", axis}};
}

// The ONNX pseudocode: every update element's coordinates, its sequence coordinate moved to
// write_indices[batch] + s (modulo max_sequence_length when circular).
std::vector<double> naive(const TensorValue& cache, const TensorValue& update,
                          const std::vector<int64_t>& wi, const std::string& mode, int64_t axis) {
  std::vector<double> y = toDoubles(cache);
  const std::vector<double> u = toDoubles(update);
  const auto& cd = cache.desc.dims;
  const auto& ud = update.desc.dims;
  const int r = static_cast<int>(cd.size());
  const int ax = static_cast<int>(axis < 0 ? axis + r : axis);
  for (int64_t i = 0; i < static_cast<int64_t>(u.size()); ++i) {
    std::vector<int64_t> c(r);
    int64_t rem = i;
    for (int a = r - 1; a >= 0; --a) c[a] = rem % ud[a], rem /= ud[a];
    int64_t t = (wi.empty() ? 0 : wi[c[0]]) + c[ax];
    if (mode == "circular") t %= cd[ax];
    c[ax] = t;
    int64_t off = 0;
    for (int a = 0; a < r; ++a) off = off * cd[a] + c[a];
    y[off] = u[i];
  }
  return y;
}

TensorValue none() {
  return TensorValue{};
}

}  // namespace

TEST(TensorScatter, WritesRowsLinearAndCircular) {
  // Cache [2, 4, 2] (batch 2, max_sequence_length 4, rows of 2); update [2, 2, 2]; axis -2 = 1.
  std::vector<float> cv(16), uv(8);
  for (int i = 0; i < 16; ++i) cv[i] = static_cast<float>(i);
  for (int i = 0; i < 8; ++i) uv[i] = static_cast<float>(100 + i);
  const TensorValue cache = fromFloats({2, 4, 2}, cv), update = fromFloats({2, 2, 2}, uv);
  // Linear from 1 (batch 0: rows 1, 2) and from 2 (batch 1: rows 2, 3).
  auto r = runKernel(*Registry::global(), kTs, attrs("linear", -2),
                     {cache, update, fromInt64s({2}, {1, 2})}, 0xff);
  ASSERT_TRUE(r.isOk()) << r.status().message();
  EXPECT_EQ(toDoubles(r->outputs[0]), (std::vector<double>{0, 1, 100, 101, 102, 103, 6, 7,  //
                                                           8, 9, 10, 11, 104, 105, 106, 107}));
  // Circular from 3 (batch 0: rows 3, 0) and from 6 % 4 = 2 (batch 1: rows 2, 3).
  r = runKernel(*Registry::global(), kTs, attrs("circular", 1),
                {cache, update, fromInt64s({2}, {3, 6})}, 0xff);
  ASSERT_TRUE(r.isOk()) << r.status().message();
  EXPECT_EQ(toDoubles(r->outputs[0]), (std::vector<double>{102, 103, 2, 3, 4, 5, 100, 101,  //
                                                           8, 9, 10, 11, 104, 105, 106, 107}));
  // No write_indices: rows 0 and 1 of each batch.
  r = runKernel(*Registry::global(), kTs, attrs("linear", -2), {cache, update, none()}, 0xff);
  ASSERT_TRUE(r.isOk()) << r.status().message();
  EXPECT_EQ(toDoubles(r->outputs[0]), (std::vector<double>{100, 101, 102, 103, 4, 5, 6, 7,  //
                                                           104, 105, 106, 107, 12, 13, 14, 15}));
}

TEST(TensorScatter, MatchesTheOnnxPseudocodeOnRandomShapes) {
  std::mt19937_64 rng(24);
  struct Shape {
    std::vector<int64_t> cache;
    int64_t axis, seq;
  };
  const std::vector<Shape> shapes = {
      {{2, 3, 8, 5}, -2, 3}, {{3, 10, 4}, 1, 4},   {{2, 3, 9}, -1, 2},      {{4, 16, 2, 8}, 1, 1},
      {{1, 5, 3}, 1, 5},     {{2, 2, 6, 7}, 2, 0}, {{3, 2, 2, 4, 3}, 3, 2}, {{2, 7}, 1, 7}};
  for (const auto& s : shapes)
    for (const std::string mode : {"linear", "circular"})
      for (DataType t : {DataType::kFloat32, DataType::kFloat16, DataType::kInt64, DataType::kUInt8,
                         DataType::kBool}) {
        const int r = static_cast<int>(s.cache.size());
        const int ax = static_cast<int>(s.axis < 0 ? s.axis + r : s.axis);
        std::vector<int64_t> ud = s.cache;
        ud[ax] = s.seq;
        const TensorValue cache = randomTensor(t, s.cache, rng, -9, 9);
        const TensorValue update = randomTensor(t, ud, rng, -9, 9);
        const int64_t m = s.cache[ax];
        for (bool with_indices : {true, false}) {
          std::vector<int64_t> wi;
          if (with_indices)
            for (int64_t b = 0; b < s.cache[0]; ++b)
              wi.push_back(mode == "linear" ? static_cast<int64_t>(rng() % (m - s.seq + 1))
                                            : static_cast<int64_t>(rng() % (3 * m)));
          std::vector<TensorValue> in{cache, update};
          if (with_indices) in.push_back(fromInt64s({s.cache[0]}, wi));
          const Attrs a = attrs(mode, s.axis);
          SCOPED_TRACE(describeTensor(cache) + " " + describeAttrs(a) +
                       (with_indices ? " with write_indices" : ""));
          auto got = runKernel(*Registry::global(), kTs, a, in, 0xff);
          ASSERT_TRUE(got.isOk()) << got.status().message();
          EXPECT_EQ(toDoubles(got->outputs[0]), naive(cache, update, wi, mode, s.axis));
          checkOp(Registry::global(), kTs, a, in);
        }
      }
}

TEST(TensorScatter, WritesInPlaceOnAnIntermediateCacheAndCopiesOneStillNeeded) {
  // past = Neg(x); present = TensorScatter(past, u, w). With `keep`, Abs(past) also reads past
  // after the scatter: the builder copies past first, so both outputs see their own values.
  for (bool keep : {false, true}) {
    NetworkDefinition net(Registry::global());
    auto x = *net.addInput("x", DataType::kFloat32, {2, 4, 2});
    auto u = *net.addInput("u", DataType::kFloat32, {2, 1, 2});
    auto w = *net.addInput("w", DataType::kInt64, {2});
    auto past = (*net.addOp("ai.onnx::Neg", {x}))[0];
    auto present = (*net.addOp(kTs, {past, u, w}, {}, "kv_update"))[0];
    ASSERT_TRUE(net.markOutput(present, "present").isOk());
    if (keep) {
      ASSERT_TRUE(net.markOutput((*net.addOp("ai.onnx::Abs", {past}))[0], "abs").isOk());
    }
    Builder builder(Registry::global());
    auto plan = builder.buildSerializedNetwork(net, BuilderConfig{});
    ASSERT_TRUE(plan.isOk()) << plan.status().message();
    auto engine = *Engine::loadMemory(std::move(*plan), "kv", Registry::global());
    // Without `keep`: Neg and the scatter only, the scatter writing Neg's buffer; with it, a copy
    // of past before the scatter (and Abs).
    EXPECT_EQ(engine->layers().size(), keep ? 4u : 2u);
    auto ctx = std::move(engine->createExecutionContext()).value();
    std::vector<float> xv(16), uv{100, 101, 102, 103};
    for (int i = 0; i < 16; ++i) xv[i] = static_cast<float>(i + 1);
    std::vector<int64_t> wv{3, 0};
    ASSERT_TRUE(ctx->setInput("x", xv.data(), 64).isOk());
    ASSERT_TRUE(ctx->setInput("u", uv.data(), 16).isOk());
    ASSERT_TRUE(ctx->setInput("w", wv.data(), 16).isOk());
    ASSERT_TRUE(ctx->execute().isOk());
    Tensor y = *ctx->output("present");
    std::vector<float> want(16);
    for (int i = 0; i < 16; ++i) want[i] = -xv[i];
    want[6] = 100, want[7] = 101, want[8] = 102, want[9] = 103;
    for (int i = 0; i < 16; ++i) EXPECT_EQ(y.as<float>()[i], want[i]) << "element " << i;
    if (keep) {
      Tensor a = *ctx->output("abs");
      for (int i = 0; i < 16; ++i) EXPECT_EQ(a.as<float>()[i], xv[i]) << "element " << i;
    }
  }
}

TEST(TensorScatter, BadInputIsNamed) {
  NetworkDefinition net(Registry::global());
  auto cache = *net.addInput("cache", DataType::kFloat32, {2, 3, 8, 5});
  auto upd = *net.addInput("upd", DataType::kFloat32, {2, 3, 2, 5});
  auto upd16 = *net.addInput("upd16", DataType::kFloat16, {2, 3, 2, 5});
  auto wide = *net.addInput("wide", DataType::kFloat32, {2, 4, 2, 5});
  auto longer = *net.addInput("longer", DataType::kFloat32, {2, 3, 9, 5});
  auto rank3 = *net.addInput("rank3", DataType::kFloat32, {2, 3, 2});
  auto flat = *net.addInput("flat", DataType::kFloat32, {8});
  auto w = *net.addInput("w", DataType::kInt64, {2});
  auto w32 = *net.addInput("w32", DataType::kInt32, {2});
  auto w3 = *net.addInput("w3", DataType::kInt64, {3});
  auto w2d = *net.addInput("w2d", DataType::kInt64, {2, 1});
  auto op = [&](std::vector<TensorRef> in, const Attrs& a = {}) {
    return net.addOp(kTs, in, a, "kv_node").status();
  };
  expectError(op({cache, upd, w}, {{"axis", int64_t{0}}}),
              {"kv_node", "ai.onnx::TensorScatter", "attribute 'axis' 0", "batch axis"});
  expectError(op({cache, upd, w}, {{"axis", int64_t{-4}}}),
              {"kv_node", "attribute 'axis' -4", "batch axis"});
  expectError(op({cache, upd, w}, {{"axis", int64_t{4}}}),
              {"kv_node", "attribute 'axis' 4 is out of range", "rank 4"});
  expectError(op({cache, upd, w}, {{"mode", std::string("ring")}}),
              {"attribute 'mode' must be linear or circular", "'ring'"});
  expectError(op({cache, upd16, w}), {"kv_node", "'update' has type FP16", "past_cache has FP32"});
  expectError(op({cache, wide, w}),
              {"kv_node", "'update' must match past_cache on axis 1", "(4 vs 3)"});
  expectError(op({cache, longer, w}),
              {"kv_node", "sequence_length 9 on axis 2", "max_sequence_length 8"});
  expectError(op({cache, rank3, w}), {"kv_node", "'update' [2, 3, 2]", "rank 4"});
  expectError(op({flat, flat}), {"kv_node", "'past_cache' must have rank >= 2", "got [8]"});
  expectError(op({cache, upd, w32}), {"kv_node", "'write_indices' must be INT64", "INT32"});
  expectError(op({cache, upd, w3}),
              {"kv_node", "'write_indices' must hold one index per batch", "(3 vs 2)"});
  expectError(op({cache, upd, w2d}), {"kv_node", "'write_indices' must be 1-D", "[2, 1]"});
  EXPECT_TRUE(op({cache, upd, w}).isOk());
  EXPECT_TRUE(op({cache, upd, TensorRef{}}).isOk());
}

TEST(TensorScatter, SequenceLongerThanTheCacheAtRunTimeIsRefused) {
  // update's sequence axis is dynamic: the shape rule records update.2 <= 8, checked at every
  // profile point when the network is built.
  NetworkDefinition net(Registry::global());
  auto cache = *net.addInput("cache", DataType::kFloat32, {2, 3, 8, 5});
  auto upd = *net.addInput("upd", DataType::kFloat32, {2, 3, -1, 5});
  ASSERT_TRUE(net.markOutput((*net.addOp(kTs, {cache, upd}, {}, "kv_node"))[0], "y").isOk());
  BuilderConfig cfg;
  cfg.profiles.push_back(
      OptimizationProfile{}.set("upd", {2, 3, 1, 5}, {2, 3, 4, 5}, {2, 3, 9, 5}));
  Builder builder(Registry::global());
  auto plan = builder.buildSerializedNetwork(net, cfg);
  ASSERT_FALSE(plan.isOk());
  expectError(plan.status(), {"kv_node", "max_sequence_length"});
}

TEST(TensorScatter, BadWriteIndicesAreRunTimeErrors) {
  const TensorValue cache = fromFloats({2, 4, 2}, std::vector<float>(16, 1.f));
  const TensorValue update = fromFloats({2, 2, 2}, std::vector<float>(8, 2.f));
  // Linear: rows [3, 5) do not fit a cache of 4.
  auto r = runKernel(*Registry::global(), kTs, attrs("linear", 1),
                     {cache, update, fromInt64s({2}, {0, 3})}, 0xff);
  ASSERT_FALSE(r.isOk());
  expectError(r.status(), {"'write_indices' holds 3 at position 1", "2 rows from 3",
                           "4 entries along axis 1", "mode 'linear'"});
  // Negative, in either mode.
  for (const std::string mode : {"linear", "circular"}) {
    r = runKernel(*Registry::global(), kTs, attrs(mode, 1),
                  {cache, update, fromInt64s({2}, {-1, 0})}, 0xff);
    ASSERT_FALSE(r.isOk());
    expectError(r.status(), {"'write_indices' holds -1 at position 0", "must not be negative"});
  }
  // Circular wraps what linear refuses.
  r = runKernel(*Registry::global(), kTs, attrs("circular", 1),
                {cache, update, fromInt64s({2}, {0, 3})}, 0xff);
  EXPECT_TRUE(r.isOk()) << r.status().message();
  // Through the engine: the error names the node's op.
  auto e = runEngine(Registry::global(), kTs, attrs("linear", -2),
                     {cache, update, fromInt64s({2}, {2, 7})});
  ASSERT_FALSE(e.isOk());
  expectError(e.status(), {"TensorScatter", "'write_indices' holds 7 at position 1"});
}

TEST(TensorScatter, EveryTacticMatchesTheReference) {
  // The CPU reference, and on a machine with a GPU the CUDA tactic, each through the engine.
  std::mt19937_64 rng(3);
  const TensorValue cache = randomTensor(DataType::kFloat16, {3, 2, 9, 6}, rng);
  const TensorValue update = randomTensor(DataType::kFloat16, {3, 2, 4, 6}, rng);
  for (const std::string mode : {"linear", "circular"}) {
    auto r = checkOpTactics(Registry::global(), kTs, attrs(mode, -2),
                            {cache, update, fromInt64s({3}, {5, 0, 2})});
    EXPECT_EQ(r.checked.size(), r.gpu ? 2u : 1u);
  }
  auto r = checkOpTactics(
      Registry::global(), kTs, attrs("circular", 3),
      {randomTensor(DataType::kInt8, {2, 3, 5, 7}, rng),
       randomTensor(DataType::kInt8, {2, 3, 5, 7}, rng), fromInt64s({2}, {6, 1000003})});
  EXPECT_EQ(r.checked.size(), r.gpu ? 2u : 1u);
}

TEST(TensorScatter, BadWriteIndicesOnTheGpuAreReportedThroughTheDeviceRecord) {
  if (!cudaDeviceInfo().isOk()) GTEST_SKIP() << "no CUDA device";
  const TensorValue cache = fromFloats({2, 3, 8, 5}, std::vector<float>(240, 1.f));
  const TensorValue update = fromFloats({2, 3, 3, 5}, std::vector<float>(90, 2.f));
  BuilderConfig cfg;
  cfg.backend = Backend::kCuda;
  auto e = runEngineWith(Registry::global(), kTs, attrs("linear", -2),
                         {cache, update, fromInt64s({2}, {0, 7})}, cfg);
  ASSERT_FALSE(e.isOk());
  expectError(e.status(), {"TensorScatter", "cuda.scatter", "'write_indices' holds 7 at position 1",
                           "[7, 10)", "past_cache's 8 entries along axis 2"});
  e = runEngineWith(Registry::global(), kTs, attrs("circular", -2),
                    {cache, update, fromInt64s({2}, {-2, 0})}, cfg);
  ASSERT_FALSE(e.isOk());
  expectError(e.status(), {"'write_indices' holds -2 at position 0"});
}
