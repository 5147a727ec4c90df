// The fused ops (FusedConv, FusedMatMul, FusedAttention, FusedAddLayerNorm, FusedGeluChain) and the
// passes that make them, on the CPU: each fused reference equals the chain of ONNX references it
// replaces, the passes fire on the exported patterns, and a fused plan gives the unfused chain's
// results.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <initializer_list>
#include <random>

#include "op_harness.h"
#include "opforge/epilogue.h"

using namespace opforge;
using namespace opforge::test;

namespace {

std::shared_ptr<Registry> reg() {
  static auto r = Registry::create();
  return r;
}

// Sets the named inputs of a context of `e` (after `shapes`: dynamic inputs' shapes), runs it and
// copies output "y" out.
Result<TensorValue> runPlan(
    Engine& e, std::initializer_list<std::pair<const char*, const TensorValue*>> in,
    std::initializer_list<std::pair<const char*, std::vector<int64_t>>> shapes = {}) {
  OPFORGE_ASSIGN_OR_RETURN(auto ctx, e.createExecutionContext());
  for (const auto& [name, dims] : shapes) OPFORGE_RETURN_IF_ERROR(ctx->setInputShape(name, dims));
  for (const auto& [name, t] : in)
    OPFORGE_RETURN_IF_ERROR(ctx->setInput(name, t->data.data(), t->data.size()));
  OPFORGE_RETURN_IF_ERROR(ctx->execute());
  OPFORGE_ASSIGN_OR_RETURN(Tensor got, ctx->output("y"));
  TensorValue v{got.desc, {}};
  v.data.assign(static_cast<const uint8_t*>(got.data),
                static_cast<const uint8_t*>(got.data) + got.bytes());
  return v;
}

// Layer name -> "op vN" of a loaded plan.
std::map<std::string, std::string> opsOf(const Engine& e) {
  std::map<std::string, std::string> op_of;
  for (const auto& l : e.layers()) op_of[l.name] = l.op;
  return op_of;
}

TensorValue run1(const std::string& key, const Attrs& a, const std::vector<TensorValue>& in) {
  auto r = runKernel(*reg(), key, a, in, 0xff);
  EXPECT_TRUE(r.isOk()) << key << ": " << r.status().message();
  return r ? r->outputs[0] : TensorValue{};
}

TEST(FusedOps, FusedConvEqualsConvAddRelu) {
  std::mt19937_64 rng(7);
  for (DataType t : {DataType::kFloat32, DataType::kFloat64}) {
    auto x = randomTensor(t, {2, 4, 7, 6}, rng), w = randomTensor(t, {5, 4, 3, 3}, rng),
         b = randomTensor(t, {5}, rng);
    auto z = randomTensor(t, {2, 5, 7, 6}, rng);
    Attrs conv{{"pads", std::vector<int64_t>{1, 1, 1, 1}}};
    auto y = run1("ai.onnx::Conv", conv, {x, w, b});
    y = run1("ai.onnx::Add", {}, {y, z});
    y = run1("ai.onnx::Relu", {}, {y});
    Attrs fused = conv;
    fused["activation"] = std::string("relu");
    EXPECT_TRUE(allClose(run1("opforge::FusedConv", fused, {x, w, b, z}), y)) << dtypeName(t);
  }
}

TEST(FusedOps, FusedMatMulEqualsMatMulAddGelu) {
  std::mt19937_64 rng(8);
  for (DataType t : {DataType::kFloat32, DataType::kFloat16}) {
    auto a = randomTensor(t, {2, 5, 8}, rng), b = randomTensor(t, {8, 6}, rng),
         bias = randomTensor(t, {6}, rng);
    auto y = run1("ai.onnx::MatMul", {}, {a, b});
    y = run1("ai.onnx::Add", {}, {y, bias});
    y = run1("ai.onnx::Gelu", {}, {y});
    EXPECT_TRUE(
        allClose(run1("opforge::FusedMatMul", {{"activation", std::string("gelu")}}, {a, b, bias}),
                 y, t == DataType::kFloat16 ? Tolerance{4e-3, 4e-3} : toleranceFor(t)))
        << dtypeName(t);
    // transB: B given as [N, K].
    auto bt = run1("ai.onnx::Transpose", {}, {b});
    EXPECT_TRUE(
        allClose(run1("opforge::FusedMatMul",
                      {{"activation", std::string("gelu")}, {"transB", int64_t{1}}}, {a, bt, bias}),
                 y, t == DataType::kFloat16 ? Tolerance{4e-3, 4e-3} : toleranceFor(t)));
  }
}

// The residual: Y = act(A B + bias + residual), with and without a bias, batched with a broadcast
// B.
TEST(FusedOps, FusedMatMulResidualEqualsMatMulAddAddRelu) {
  std::mt19937_64 rng(18);
  for (DataType t : {DataType::kFloat32, DataType::kFloat64}) {
    auto a = randomTensor(t, {3, 5, 8}, rng), b = randomTensor(t, {8, 6}, rng),
         bias = randomTensor(t, {6}, rng), r = randomTensor(t, {3, 5, 6}, rng);
    auto y = run1("ai.onnx::MatMul", {}, {a, b});
    auto no_bias = run1("ai.onnx::Add", {}, {y, r});
    y = run1("ai.onnx::Add", {}, {y, bias});
    y = run1("ai.onnx::Add", {}, {y, r});
    y = run1("ai.onnx::Relu", {}, {y});
    EXPECT_TRUE(allClose(
        run1("opforge::FusedMatMul", {{"activation", std::string("relu")}}, {a, b, bias, r}), y))
        << dtypeName(t);
    TensorValue absent;
    EXPECT_TRUE(allClose(run1("opforge::FusedMatMul", {}, {a, b, absent, r}), no_bias))
        << dtypeName(t);
  }
  // A residual that is not Y's shape is refused by the shape rule.
  auto a = randomTensor(DataType::kFloat32, {5, 8}, rng),
       b = randomTensor(DataType::kFloat32, {8, 6}, rng),
       r = randomTensor(DataType::kFloat32, {1, 6}, rng);
  TensorValue absent;
  auto bad = runKernel(*reg(), "opforge::FusedMatMul", {}, {a, b, absent, r}, 0xff);
  ASSERT_FALSE(bad.isOk());
  EXPECT_NE(bad.status().message().find("residual"), std::string::npos) << bad.status().message();
}

// Fuzz finding
// (tests/fuzz/regressions/onnx_struct/onnx_struct-crash-attention-scratch-of-empty-batch): an empty
// batch with a sequence of 2^23 made the CPU tactics allocate one head's 2^46-element score scratch
// before finding no head to compute. Now an empty output computes nothing, and scores past 2^40
// elements are refused by the shape rule, as the unfused MatMul's would be.
TEST(FusedOps, FusedAttentionBoundsItsScratch) {
  std::mt19937_64 rng(2);
  TensorValue q = randomTensor(DataType::kFloat32, {0, 2, int64_t{1} << 23, 4}, rng);
  for (int32_t tactic : {0, (1 << 30)}) {
    auto r = runKernel(*reg(), "opforge::FusedAttention", {}, {q, q, q}, 0xff, tactic);
    ASSERT_TRUE(r.isOk()) << tactic << ": " << r.status().message();
    EXPECT_EQ(r->outputs[0].desc.numel(), 0);
  }
  TensorValue big = randomTensor(DataType::kFloat32, {1, 1, int64_t{1} << 21, 1}, rng);
  auto r = runKernel(*reg(), "opforge::FusedAttention", {}, {big, big, big}, 0xff);
  ASSERT_FALSE(r.isOk());
  EXPECT_NE(r.status().message().find("the attention scores"), std::string::npos)
      << r.status().message();
}

TEST(FusedOps, FusedAttentionEqualsTheChain) {
  std::mt19937_64 rng(9);
  auto q = randomTensor(DataType::kFloat32, {2, 3, 5, 4}, rng),
       k = randomTensor(DataType::kFloat32, {2, 3, 6, 4}, rng);
  auto v = randomTensor(DataType::kFloat32, {2, 3, 6, 7}, rng);
  auto kt = run1("ai.onnx::Transpose", {{"perm", std::vector<int64_t>{0, 1, 3, 2}}}, {k});
  auto s = run1("ai.onnx::MatMul", {}, {q, kt});
  TensorValue half = randomTensor(DataType::kFloat32, {}, rng);
  const float scale = 0.35f;
  std::memcpy(half.data.data(), &scale, 4);
  s = run1("ai.onnx::Mul", {}, {s, half});
  s = run1("ai.onnx::Softmax", {}, {s});
  auto y = run1("ai.onnx::MatMul", {}, {s, v});
  EXPECT_TRUE(allClose(run1("opforge::FusedAttention", {{"scale", 0.35}}, {q, k, v}), y));
  EXPECT_TRUE(allClose(
      run1("opforge::FusedAttention", {{"scale", 0.35}, {"k_transposed", int64_t{1}}}, {q, kt, v}),
      y));
}

// A float mask as transformers' SDPA exports it: 0 where seen, -inf where not, [B, 1, Sq, Sk]
// broadcast over the heads; `dead_row` makes one query row see no key at all.
TensorValue maskOf(DataType t, int64_t B, int64_t sq, int64_t sk, std::mt19937_64& rng,
                   bool dead_row) {
  TensorValue m{{t, {B, 1, sq, sk}}, {}};
  m.data.assign(m.desc.bytes(), 0);
  std::bernoulli_distribution hide(0.3);
  for (int64_t i = 0; i < m.desc.numel(); ++i) {
    const int64_t j = i % sk, row = i / sk;
    const bool off = (dead_row && row == 1) || (j > 0 && hide(rng));
    storeFromDouble(m.data.data(), t, i, off ? -INFINITY : 0.0);
  }
  return m;
}

TEST(FusedOps, FusedAttentionWithABiasEqualsTheChain) {
  std::mt19937_64 rng(15);
  for (bool dead : {false, true}) {
    auto q = randomTensor(DataType::kFloat32, {2, 3, 5, 4}, rng),
         k = randomTensor(DataType::kFloat32, {2, 3, 6, 4}, rng),
         v = randomTensor(DataType::kFloat32, {2, 3, 6, 7}, rng);
    auto mask = maskOf(DataType::kFloat32, 2, 5, 6, rng, dead);
    TensorValue scale = randomTensor(DataType::kFloat32, {}, rng);
    const float sc = 0.4f;
    std::memcpy(scale.data.data(), &sc, 4);
    auto s =
        run1("ai.onnx::MatMul", {},
             {q, run1("ai.onnx::Transpose", {{"perm", std::vector<int64_t>{0, 1, 3, 2}}}, {k})});
    s = run1("ai.onnx::Add", {}, {run1("ai.onnx::Mul", {}, {s, scale}), mask});
    auto y = run1("ai.onnx::MatMul", {}, {run1("ai.onnx::Softmax", {}, {s}), v});
    auto got = run1("opforge::FusedAttention", {{"scale", 0.4}}, {q, k, v, mask});
    EXPECT_TRUE(allClose(got, y));
    // A row that sees no key is NaN in both (softmax of -inf throughout).
    const float* gp = reinterpret_cast<const float*>(got.data.data());
    EXPECT_EQ(std::isnan(gp[7]), dead);  // (b 0, h 0, row 1, column 0)
  }
  // A bias that does not broadcast to the scores, and a bias with the packed layout.
  NetworkDefinition net(reg());
  auto q = *net.addInput("q", DataType::kFloat32, {2, 3, 5, 4});
  auto bad = *net.addInput("bad", DataType::kFloat32, {2, 1, 4, 6});
  auto k = *net.addInput("k", DataType::kFloat32, {2, 3, 6, 4});
  expectError(net.addOp("opforge::FusedAttention", {q, k, k, bad}, {}, "attn").status(),
              {"attn", "input 'bias' [2, 1, 4, 6] must broadcast to the scores"});
  auto p = *net.addInput("p", DataType::kFloat32, {5, 2, 12});
  expectError(net.addOp("opforge::FusedAttention", {p, p, p, bad},
                        {{"layout", std::string("sb3e")}, {"heads", int64_t{2}}}, "packed")
                  .status(),
              {"packed", "input 'bias' needs layout bhsd"});
}

// The attention of transformers' SDPA exports (BERT, GPT-2): MatMul(Mul(Q, a), Mul(Transpose(K),
// b)) -> Add(mask) -> Softmax -> Where(IsNaN(P), 0, P) -> MatMul(V) becomes one FusedAttention with
// the mask as its bias and nan_to_zero, and the plan gives the chain's results (zeros for the
// query that sees no key).
TEST(FusedOps, AttentionFusionTakesTheMaskAdd) {
  std::mt19937_64 rng(16);
  const int64_t B = 2, H = 3, S = 7, d = 8;
  NetworkDefinition net(reg());
  auto half = [&](const std::string& name) {
    TensorValue c{{DataType::kFloat32, {}}, std::vector<uint8_t>(4)};
    const float v = 1.0f / std::sqrt(std::sqrt(static_cast<float>(d)));
    std::memcpy(c.data.data(), &v, 4);
    return *net.addConstant(name, c);
  };
  auto q = *net.addInput("q", DataType::kFloat32, {B, H, S, d});
  auto k = *net.addInput("k", DataType::kFloat32, {B, H, S, d});
  auto v = *net.addInput("v", DataType::kFloat32, {B, H, S, d});
  auto m = *net.addInput("mask", DataType::kFloat32, {B, 1, S, S});
  auto op = [&](const char* key, std::vector<TensorRef> in, const char* name, Attrs a = {}) {
    return (*net.addOp(key, in, a, name))[0];
  };
  auto qs = op("ai.onnx::Mul", {q, half("a")}, "mul_q");
  auto kt =
      op("ai.onnx::Transpose", {k}, "transpose_k", {{"perm", std::vector<int64_t>{0, 1, 3, 2}}});
  auto ks = op("ai.onnx::Mul", {kt, half("b")}, "mul_k");
  auto sc = op("ai.onnx::MatMul", {qs, ks}, "scores");
  auto biased = op("ai.onnx::Add", {sc, m}, "mask_add");
  auto p = op("ai.onnx::Softmax", {biased}, "softmax", {{"axis", int64_t{-1}}});
  TensorValue zero{{DataType::kFloat32, {}}, std::vector<uint8_t>(4, 0)};
  auto zc = *net.addConstant("zero", zero);
  auto guarded = op("ai.onnx::Where", {op("ai.onnx::IsNaN", {p}, "isnan"), zc, p}, "where");
  auto y = op("ai.onnx::MatMul", {guarded, v}, "context");
  ASSERT_TRUE(net.markOutput(y, "y").isOk());
  auto plan = Builder(reg()).buildSerializedNetwork(net, BuilderConfig{});
  ASSERT_TRUE(plan.isOk()) << plan.status().message();
  auto e = Engine::loadMemory(std::move(*plan), "attention.plan", reg());
  ASSERT_TRUE(e.isOk()) << e.status().message();
  const auto layers = (*e)->layers();
  ASSERT_EQ(layers.size(), 1u) << (*e)->inspect();
  EXPECT_EQ(layers[0].op, "opforge::FusedAttention v1") << (*e)->inspect();
  EXPECT_EQ(layers[0].inputs.size(), 4u) << (*e)->inspect();
  EXPECT_EQ(layers[0].name, "mul_q+transpose_k+mul_k+scores+mask_add+softmax+isnan+where+context");
  const auto qv = randomTensor(DataType::kFloat32, {B, H, S, d}, rng),
             kv = randomTensor(DataType::kFloat32, {B, H, S, d}, rng),
             vv = randomTensor(DataType::kFloat32, {B, H, S, d}, rng);
  const auto mv = maskOf(DataType::kFloat32, B, S, S, rng, true);
  auto run = runPlan(**e, {{"q", &qv}, {"k", &kv}, {"v", &vv}, {"mask", &mv}});
  ASSERT_TRUE(run.isOk()) << run.status().message();
  const TensorValue& g = *run;
  TensorValue hv{{DataType::kFloat32, {}}, std::vector<uint8_t>(4)};
  const float h = 1.0f / std::sqrt(std::sqrt(static_cast<float>(d)));
  std::memcpy(hv.data.data(), &h, 4);
  auto s = run1(
      "ai.onnx::MatMul", {},
      {run1("ai.onnx::Mul", {}, {qv, hv}),
       run1("ai.onnx::Mul", {},
            {run1("ai.onnx::Transpose", {{"perm", std::vector<int64_t>{0, 1, 3, 2}}}, {kv}), hv})});
  s = run1("ai.onnx::Softmax", {{"axis", int64_t{-1}}}, {run1("ai.onnx::Add", {}, {s, mv})});
  s = run1("ai.onnx::Where", {}, {run1("ai.onnx::IsNaN", {}, {s}), zero, s});
  EXPECT_TRUE(allClose(g, run1("ai.onnx::MatMul", {}, {s, vv}), Tolerance{1e-5, 1e-5}));
  const float* gp = reinterpret_cast<const float*>(g.data.data());
  EXPECT_EQ(gp[d], 0.f);  // (b 0, h 0, row 1, column 0): the row that sees no key
  for (int64_t i = 0; i < g.desc.numel(); ++i) ASSERT_FALSE(std::isnan(gp[i])) << i;
}

// transformers' head split and merge around the attention: Q, K, V [B, S, H, d] transposed to [B,
// H, S, d] (K to [B, H, d, S]), the result through an identity Reshape and a Transpose back to [B,
// S, H, d]: attention_heads makes it one FusedAttention (layout bshd) with the four Transposes and
// the Reshape read in place, equal to the chain.
TEST(FusedOps, AttentionHeadsReadTheTransposesInPlace) {
  std::mt19937_64 rng(18);
  const int64_t B = 2, S = 7, H = 3, d = 8;
  NetworkDefinition net(reg());
  auto op = [&](const char* key, std::vector<TensorRef> in, const char* name, Attrs a = {}) {
    return (*net.addOp(key, in, a, name))[0];
  };
  auto perm = [](std::vector<int64_t> p) { return Attrs{{"perm", p}}; };
  auto q4 = *net.addInput("q", DataType::kFloat32, {B, S, H, d});
  auto k4 = *net.addInput("k", DataType::kFloat32, {B, S, H, d});
  auto v4 = *net.addInput("v", DataType::kFloat32, {B, S, H, d});
  auto mask = *net.addInput("mask", DataType::kFloat32, {B, 1, 1, S});
  auto q = op("ai.onnx::Transpose", {q4}, "transpose_q", perm({0, 2, 1, 3}));
  auto kt = op("ai.onnx::Transpose", {k4}, "transpose_k", perm({0, 2, 3, 1}));
  auto v = op("ai.onnx::Transpose", {v4}, "transpose_v", perm({0, 2, 1, 3}));
  auto sc = op("ai.onnx::MatMul", {q, kt}, "scores");
  auto p = op("ai.onnx::Softmax", {op("ai.onnx::Add", {sc, mask}, "mask_add")}, "softmax",
              {{"axis", int64_t{-1}}});
  auto ctx4 = op("ai.onnx::MatMul", {p, v}, "context");
  TensorValue same{{DataType::kInt64, {4}}, std::vector<uint8_t>(32)};
  const int64_t dims[4] = {B, H, S, d};
  std::memcpy(same.data.data(), dims, 32);
  auto r = op("ai.onnx::Reshape", {ctx4, *net.addConstant("same_shape", same)}, "view");
  auto y = op("ai.onnx::Transpose", {r}, "merge", perm({0, 2, 1, 3}));
  ASSERT_TRUE(net.markOutput(y, "y").isOk());
  auto plan = Builder(reg()).buildSerializedNetwork(net, BuilderConfig{});
  ASSERT_TRUE(plan.isOk()) << plan.status().message();
  auto e = Engine::loadMemory(std::move(*plan), "heads.plan", reg());
  ASSERT_TRUE(e.isOk()) << e.status().message();
  const auto layers = (*e)->layers();
  ASSERT_EQ(layers.size(), 1u) << (*e)->inspect();
  EXPECT_EQ(layers[0].op, "opforge::FusedAttention v1");
  EXPECT_EQ(layers[0].name,
            "transpose_q+transpose_k+transpose_v+scores+mask_add+softmax+context+view+merge");
  const auto qv = randomTensor(DataType::kFloat32, {B, S, H, d}, rng),
             kv = randomTensor(DataType::kFloat32, {B, S, H, d}, rng),
             vv = randomTensor(DataType::kFloat32, {B, S, H, d}, rng);
  TensorValue mv{{DataType::kFloat32, {B, 1, 1, S}}, std::vector<uint8_t>(B * S * 4, 0)};
  reinterpret_cast<float*>(mv.data.data())[S + 2] = -INFINITY;  // batch 1 does not see key 2
  auto run = runPlan(**e, {{"q", &qv}, {"k", &kv}, {"v", &vv}, {"mask", &mv}});
  ASSERT_TRUE(run.isOk()) << run.status().message();
  const TensorValue& gv = *run;
  auto t = [&](const TensorValue& x, std::vector<int64_t> pm) {
    return run1("ai.onnx::Transpose", {{"perm", pm}}, {x});
  };
  auto want = run1("ai.onnx::MatMul", {}, {t(qv, {0, 2, 1, 3}), t(kv, {0, 2, 3, 1})});
  want = run1("ai.onnx::Softmax", {{"axis", int64_t{-1}}}, {run1("ai.onnx::Add", {}, {want, mv})});
  want = t(run1("ai.onnx::MatMul", {}, {want, t(vv, {0, 2, 1, 3})}), {0, 2, 1, 3});
  EXPECT_EQ(gv.desc.dims, (std::vector<int64_t>{B, S, H, d}));
  EXPECT_TRUE(allClose(gv, want, Tolerance{1e-5, 1e-5}));
}

// FusedAttention's CPU tactic (cpu.sgemm, float arithmetic) against the FP64 reference, through the
// engine with each tactic pinned (test::checkOpTactics): every layout, K transposed, a mask with a
// row that sees no key, with and without nan_to_zero, FP32 and FP16.
TEST(FusedOps, FusedAttentionCpuTacticMatchesTheReference) {
  std::mt19937_64 rng(19);
  for (DataType t : {DataType::kFloat32, DataType::kFloat16}) {
    SCOPED_TRACE(dtypeName(t));
    auto tactics = [&](const Attrs& a, const std::vector<TensorValue>& in) {
      const auto r =
          checkOpTactics(reg(), "opforge::FusedAttention", a, in,
                         t == DataType::kFloat16 ? Tolerance{2e-3, 2e-3} : Tolerance{2e-5, 2e-5});
      EXPECT_NE(std::find(r.checked.begin(), r.checked.end(), "cpu 1073741824 cpu.sgemm"),
                r.checked.end());
    };
    const int64_t B = 2, H = 3, sq = 9, sk = 21, d = 8, z1 = 1;
    auto mask = maskOf(t, B, sq, sk, rng, true);
    for (int64_t z : {0, 1})
      tactics({{"scale", 0.3}, {"nan_to_zero", z}},
              {randomTensor(t, {B, H, sq, d}, rng), randomTensor(t, {B, H, sk, d}, rng),
               randomTensor(t, {B, H, sk, 5}, rng), mask});
    tactics({{"scale", 0.3}, {"k_transposed", int64_t{1}}},
            {randomTensor(t, {B, H, sq, d}, rng), randomTensor(t, {B, H, d, sk}, rng),
             randomTensor(t, {B, H, sk, d}, rng)});
    tactics({{"scale", 0.3}, {"layout", std::string("bshd")}, {"nan_to_zero", int64_t{1}}},
            {randomTensor(t, {B, sq, H, d}, rng), randomTensor(t, {B, sk, H, d}, rng),
             randomTensor(t, {B, sk, H, d}, rng), mask});
    const auto p = randomTensor(t, {sq, B, 3 * H * d}, rng);
    tactics({{"scale", 0.3}, {"layout", std::string("sb3e")}, {"heads", H}}, {p, p, p});
    const auto pb = randomTensor(t, {B, sq, 3 * H * d}, rng);
    tactics({{"scale", 0.3}, {"layout", std::string("bs3e")}, {"heads", H}}, {pb, pb, pb});
    auto self_mask = maskOf(t, B, sq, sq, rng, true);
    tactics({{"scale", 0.3}, {"layout", std::string("bs3e")}, {"heads", H}, {"nan_to_zero", z1}},
            {pb, pb, pb, self_mask});
  }
}

// MatMul broadcasts a batch of 1 (K and V shared by every batch row of a dynamic batch);
// FusedAttention does not, so that chain stays unfused and still gives MatMul's result.
TEST(FusedOps, AttentionOverABroadcastBatchIsNotFused) {
  std::mt19937_64 rng(17);
  NetworkDefinition net(reg());
  auto q = *net.addInput("q", DataType::kFloat32, {-1, 3, 5, 4});
  auto k = *net.addInput("k", DataType::kFloat32, {1, 3, 6, 4});
  auto v = *net.addInput("v", DataType::kFloat32, {1, 3, 6, 4});
  auto kt = (*net.addOp("ai.onnx::Transpose", {k}, {{"perm", std::vector<int64_t>{0, 1, 3, 2}}},
                        "kt"))[0];
  auto s = (*net.addOp("ai.onnx::MatMul", {q, kt}, {}, "scores"))[0];
  auto p = (*net.addOp("ai.onnx::Softmax", {s}, {{"axis", int64_t{-1}}}, "softmax"))[0];
  auto y = (*net.addOp("ai.onnx::MatMul", {p, v}, {}, "context"))[0];
  ASSERT_TRUE(net.markOutput(y, "y").isOk());
  BuilderConfig cfg;
  cfg.profiles.emplace_back().set("q", {1, 3, 5, 4}, {2, 3, 5, 4}, {4, 3, 5, 4});
  auto plan = Builder(reg()).buildSerializedNetwork(net, cfg);
  ASSERT_TRUE(plan.isOk()) << plan.status().message();
  auto e = Engine::loadMemory(std::move(*plan), "broadcast.plan", reg());
  ASSERT_TRUE(e.isOk()) << e.status().message();
  for (const auto& l : (*e)->layers()) EXPECT_NE(l.op, "opforge::FusedAttention v1") << l.name;
  const auto qv = randomTensor(DataType::kFloat32, {2, 3, 5, 4}, rng),
             kv = randomTensor(DataType::kFloat32, {1, 3, 6, 4}, rng),
             vv = randomTensor(DataType::kFloat32, {1, 3, 6, 4}, rng);
  auto run = runPlan(**e, {{"q", &qv}, {"k", &kv}, {"v", &vv}}, {{"q", {2, 3, 5, 4}}});
  ASSERT_TRUE(run.isOk()) << run.status().message();
  const TensorValue& g = *run;
  auto want = run1("ai.onnx::MatMul", {},
                   {run1("ai.onnx::Softmax", {{"axis", int64_t{-1}}},
                         {run1("ai.onnx::MatMul", {},
                               {qv, run1("ai.onnx::Transpose",
                                         {{"perm", std::vector<int64_t>{0, 1, 3, 2}}}, {kv})})}),
                    vv});
  EXPECT_TRUE(allClose(g, want, Tolerance{1e-5, 1e-5}));
}

// A bias whose length is known only at run time (HuBERT's TorchScript export Expand-s its mask to
// run-time values) may be 1 or the scores' length there: both run, and against the chain; another
// length is a run-time error naming the bias, never a read past it.
TEST(FusedOps, FusedAttentionTakesABiasOfRunTimeLengths) {
  std::mt19937_64 rng(19);
  NetworkDefinition net(reg());
  auto q = *net.addInput("q", DataType::kFloat32, {-1, 3, 5, 4});
  auto k = *net.addInput("k", DataType::kFloat32, {-1, 3, 6, 4});
  auto bias = *net.addInput("bias", DataType::kFloat32, {-1, 1, 5, 6});  // its own symbol
  auto y = (*net.addOp("opforge::FusedAttention", {q, k, k, bias}, {{"scale", 0.5}}, "attn"))[0];
  ASSERT_TRUE(net.markOutput(y, "y").isOk());
  BuilderConfig cfg;
  cfg.profiles.emplace_back()
      .set("q", {1, 3, 5, 4}, {2, 3, 5, 4}, {4, 3, 5, 4})
      .set("k", {1, 3, 6, 4}, {2, 3, 6, 4}, {4, 3, 6, 4})
      .set("bias", {1, 1, 5, 6}, {2, 1, 5, 6}, {4, 1, 5, 6});
  auto plan = Builder(reg()).buildSerializedNetwork(net, cfg);
  ASSERT_TRUE(plan.isOk()) << plan.status().message();
  auto e = Engine::loadMemory(std::move(*plan), "bias.plan", reg());
  ASSERT_TRUE(e.isOk()) << e.status().message();
  const auto qv = randomTensor(DataType::kFloat32, {2, 3, 5, 4}, rng),
             kv = randomTensor(DataType::kFloat32, {2, 3, 6, 4}, rng);
  for (int64_t nb : {int64_t{1}, int64_t{2}}) {
    const auto bv = randomTensor(DataType::kFloat32, {nb, 1, 5, 6}, rng);
    auto run = runPlan(**e, {{"q", &qv}, {"k", &kv}, {"bias", &bv}},
                       {{"q", {2, 3, 5, 4}}, {"k", {2, 3, 6, 4}}, {"bias", {nb, 1, 5, 6}}});
    ASSERT_TRUE(run.isOk()) << run.status().message();
    auto want = run1("opforge::FusedAttention", {{"scale", 0.5}}, {qv, kv, kv, bv});
    EXPECT_TRUE(allClose(*run, want, Tolerance{1e-5, 1e-5})) << nb;
  }
  const auto b3 = randomTensor(DataType::kFloat32, {3, 1, 5, 6}, rng);
  auto bad = runPlan(**e, {{"q", &qv}, {"k", &kv}, {"bias", &b3}},
                     {{"q", {2, 3, 5, 4}}, {"k", {2, 3, 6, 4}}, {"bias", {3, 1, 5, 6}}});
  ASSERT_FALSE(bad.isOk());
  EXPECT_NE(bad.status().message().find("input 'bias'"), std::string::npos)
      << bad.status().message();
}

// layout sb3e (packed P [S, B, 3E], heads H) equals bhsd on the thirds of P split into heads:
// Q_bhsd = transpose(reshape(P[:, :, 0:E], [S, B, H, d]), [1, 2, 0, 3]); Y = [S, B, H, d].
TEST(FusedOps, FusedAttentionPackedEqualsBhsd) {
  std::mt19937_64 rng(12);
  const int64_t S = 5, B = 2, H = 3, d = 4, E = H * d;
  auto p = randomTensor(DataType::kFloat32, {S, B, 3 * E}, rng);
  const float* pp = reinterpret_cast<const float*>(p.data.data());
  auto third = [&](int64_t i) {  // [B, H, S, d]
    TensorValue x = randomTensor(DataType::kFloat32, {B, H, S, d}, rng);
    float* xp = reinterpret_cast<float*>(x.data.data());
    for (int64_t b = 0; b < B; ++b)
      for (int64_t h = 0; h < H; ++h)
        for (int64_t s = 0; s < S; ++s)
          for (int64_t c = 0; c < d; ++c)
            xp[((b * H + h) * S + s) * d + c] = pp[(s * B + b) * 3 * E + i * E + h * d + c];
    return x;
  };
  auto y = run1("opforge::FusedAttention", {{"scale", 0.5}},
                {third(0), third(1), third(2)});  // [B, H, S, d]
  y = run1("ai.onnx::Transpose", {{"perm", std::vector<int64_t>{2, 0, 1, 3}}},
           {y});  // [S, B, H, d]
  auto got = run1("opforge::FusedAttention",
                  {{"scale", 0.5}, {"layout", std::string("sb3e")}, {"heads", H}}, {p, p, p});
  EXPECT_EQ(got.desc.dims, y.desc.dims);
  EXPECT_TRUE(allClose(got, y));
}

// layout bs3e (packed P [B, S, 3E], heads H, optional bias [B, H, S, S]) equals bshd on the thirds
// of P split into heads: Q_bshd = reshape(P[:, :, 0:E], [B, S, H, d]); Y = [B, S, H, d].
TEST(FusedOps, FusedAttentionBatchFirstPackedEqualsBshd) {
  std::mt19937_64 rng(21);
  const int64_t S = 6, B = 2, H = 3, d = 4, E = H * d;
  auto p = randomTensor(DataType::kFloat32, {B, S, 3 * E}, rng);
  const float* pp = reinterpret_cast<const float*>(p.data.data());
  auto third = [&](int64_t i) {  // [B, S, H, d]
    TensorValue x = randomTensor(DataType::kFloat32, {B, S, H, d}, rng);
    float* xp = reinterpret_cast<float*>(x.data.data());
    for (int64_t b = 0; b < B; ++b)
      for (int64_t s = 0; s < S; ++s)
        for (int64_t c = 0; c < E; ++c)
          xp[(b * S + s) * E + c] = pp[(b * S + s) * 3 * E + i * E + c];
    return x;
  };
  const TensorValue q = third(0), k = third(1), v = third(2);
  for (bool masked : {false, true}) {
    SCOPED_TRACE(masked ? "with a mask" : "no mask");
    std::vector<TensorValue> in3{p, p, p}, sep{q, k, v};
    if (masked) {
      auto mask = maskOf(DataType::kFloat32, B, S, S, rng, false);
      in3.push_back(mask);
      sep.push_back(mask);
    }
    const auto want =
        run1("opforge::FusedAttention", {{"scale", 0.4}, {"layout", std::string("bshd")}}, sep);
    const auto got = run1("opforge::FusedAttention",
                          {{"scale", 0.4}, {"layout", std::string("bs3e")}, {"heads", H}}, in3);
    EXPECT_EQ(got.desc.dims, (std::vector<int64_t>{B, S, H, d}));
    EXPECT_TRUE(allClose(got, want));
  }
  // bs3e's shape rule: P must be [B, S, 3E] with 3E a multiple of 3 * heads.
  NetworkDefinition net(reg());
  auto bad = *net.addInput("p", DataType::kFloat32, {B, S, 3 * E + 1});
  expectError(net.addOp("opforge::FusedAttention", {bad, bad, bad},
                        {{"layout", std::string("bs3e")}, {"heads", H}}, "packed")
                  .status(),
              {"packed", "layout bs3e needs Q = [B, S, 3E]"});
}

// x converted to type t element by element (through double; FP16/BF16 round via float, as the
// kernels' stores do).
TensorValue converted(const TensorValue& x, DataType t) {
  TensorValue y;
  y.desc = x.desc;
  y.desc.dtype = t;
  y.data.resize(y.desc.bytes());
  for (int64_t i = 0; i < x.desc.numel(); ++i)
    storeFromDouble(y.data.data(), t, i, loadAsDouble(x.data.data(), x.desc.dtype, i));
  return y;
}

TensorValue scalarF64(double v) {
  TensorValue s{{DataType::kFloat64, {}}, std::vector<uint8_t>(8)};
  std::memcpy(s.data.data(), &v, 8);
  return s;
}

// windows = W (Swin's shifted windows): batch x reads bias row x mod W — equal to the bias tiled
// over the batch; bhsd of rank 4 and bs3e; a batch that is not a multiple of W is refused.
TEST(FusedOps, FusedAttentionWindowBiasRepeatsOverTheBatch) {
  std::mt19937_64 rng(22);
  const int64_t W = 3, X = 2 * W, H = 2, N = 5, d = 4, E = H * d;
  const auto bias = randomTensor(DataType::kFloat32, {W, H, N, N}, rng);
  TensorValue tiled{{DataType::kFloat32, {X, H, N, N}}, {}};
  for (int64_t x = 0; x < X; ++x)
    tiled.data.insert(tiled.data.end(), bias.data.begin() + (x % W) * bias.desc.bytes() / W,
                      bias.data.begin() + (x % W + 1) * bias.desc.bytes() / W);
  const auto q = randomTensor(DataType::kFloat32, {X, H, N, d}, rng),
             k = randomTensor(DataType::kFloat32, {X, H, N, d}, rng),
             v = randomTensor(DataType::kFloat32, {X, H, N, d}, rng);
  const auto want = run1("opforge::FusedAttention", {{"scale", 0.3}}, {q, k, v, tiled});
  EXPECT_TRUE(allClose(
      run1("opforge::FusedAttention", {{"scale", 0.3}, {"windows", W}}, {q, k, v, bias}), want));
  // bs3e over P [X, N, 3E] holding the same Q, K, V: Y [X, N, H, d] = want transposed.
  TensorValue p{{DataType::kFloat32, {X, N, 3 * E}}, std::vector<uint8_t>(X * N * 3 * E * 4)};
  float* pp = reinterpret_cast<float*>(p.data.data());
  const TensorValue* parts[3] = {&q, &k, &v};
  for (int i = 0; i < 3; ++i) {
    const float* src = reinterpret_cast<const float*>(parts[i]->data.data());
    for (int64_t x = 0; x < X; ++x)
      for (int64_t h = 0; h < H; ++h)
        for (int64_t n = 0; n < N; ++n)
          for (int64_t c = 0; c < d; ++c)
            pp[(x * N + n) * 3 * E + i * E + h * d + c] = src[((x * H + h) * N + n) * d + c];
  }
  const auto got =
      run1("opforge::FusedAttention",
           {{"scale", 0.3}, {"layout", std::string("bs3e")}, {"heads", H}, {"windows", W}},
           {p, p, p, bias});
  EXPECT_TRUE(allClose(
      got, run1("ai.onnx::Transpose", {{"perm", std::vector<int64_t>{0, 2, 1, 3}}}, {want})));
  for (DataType t : {DataType::kFloat32, DataType::kFloat16}) {
    SCOPED_TRACE(dtypeName(t));
    const auto r =
        checkOpTactics(reg(), "opforge::FusedAttention", {{"scale", 0.3}, {"windows", W}},
                       {converted(q, t), converted(k, t), converted(v, t), converted(bias, t)},
                       t == DataType::kFloat16 ? Tolerance{2e-3, 2e-3} : Tolerance{2e-5, 2e-5});
    EXPECT_NE(std::find(r.checked.begin(), r.checked.end(), "cpu 1073741824 cpu.sgemm"),
              r.checked.end());
  }
  NetworkDefinition net(reg());
  auto q5 = *net.addInput("q", DataType::kFloat32, {X + 1, H, N, d});
  auto b = *net.addInput("b", DataType::kFloat32, {W, H, N, N});
  expectError(
      net.addOp("opforge::FusedAttention", {q5, q5, q5, b}, {{"windows", W}}, "win").status(),
      {"win", "the batch must be a multiple of it"});
}

// FP16 and BF16: the fused reference is the chain of ONNX references in FP64 on the inputs
// converted once, rounded once (the unfused FP16 chain would round the scores and probabilities).
TEST(FusedOps, FusedAttentionRoundsOnce) {
  std::mt19937_64 rng(13);
  for (DataType t : {DataType::kFloat16, DataType::kBFloat16}) {
    auto q = randomTensor(t, {3, 5, 8}, rng), k = randomTensor(t, {3, 9, 8}, rng),
         v = randomTensor(t, {3, 9, 4}, rng);
    auto s = run1("ai.onnx::MatMul", {},
                  {converted(q, DataType::kFloat64),
                   run1("ai.onnx::Transpose", {{"perm", std::vector<int64_t>{0, 2, 1}}},
                        {converted(k, DataType::kFloat64)})});
    s = run1("ai.onnx::Softmax", {}, {run1("ai.onnx::Mul", {}, {s, scalarF64(0.3)})});
    auto y = run1("ai.onnx::MatMul", {}, {s, converted(v, DataType::kFloat64)});
    EXPECT_EQ(run1("opforge::FusedAttention", {{"scale", 0.3}}, {q, k, v}), converted(y, t))
        << dtypeName(t);
  }
}

// The fused GELU chain likewise: its stages' ONNX references in FP64, one rounding at the end.
TEST(FusedOps, FusedGeluChainEqualsTheChainRoundedOnce) {
  std::mt19937_64 rng(14);
  const std::vector<int32_t> chain = {2, 3, 6, 7, 4, 1, 5, 8};
  const std::vector<float> scalars = {0, 0, -1.5f, 0.25f, 0, 0, 0, 3.0f};
  for (DataType t : {DataType::kFloat32, DataType::kFloat16, DataType::kBFloat16}) {
    auto x = randomTensor(t, {4, 37}, rng, -6, 6);
    auto y = run1("ai.onnx::Gelu", {}, {converted(x, DataType::kFloat64)});
    const char* ops[] = {"", "Gelu", "Gelu", "Relu", "Tanh", "Sigmoid", "Mul", "Add", "Div"};
    for (size_t i = 0; i < chain.size(); ++i) {
      const std::string key = std::string("ai.onnx::") + ops[chain[i]];
      Attrs a;
      if (chain[i] == 2) a["approximate"] = std::string("tanh");
      y = chain[i] >= 6 ? run1(key, {}, {y, scalarF64(scalars[i])}) : run1(key, a, {y});
    }
    EXPECT_EQ(run1("opforge::FusedGeluChain", {{"chain", chain}, {"chain_scalars", scalars}}, {x}),
              converted(y, t))
        << dtypeName(t);
  }
}

TEST(FusedOps, FusedAddLayerNormEqualsTheChain) {
  std::mt19937_64 rng(10);
  auto x = randomTensor(DataType::kFloat32, {3, 4, 16}, rng),
       r = randomTensor(DataType::kFloat32, {3, 4, 16}, rng);
  auto sc = randomTensor(DataType::kFloat32, {16}, rng),
       b = randomTensor(DataType::kFloat32, {16}, rng);
  auto sum = run1("ai.onnx::Add", {}, {x, r});
  auto y = run1("ai.onnx::LayerNormalization", {}, {sum, sc, b});
  EXPECT_TRUE(allClose(run1("opforge::FusedAddLayerNorm", {}, {x, r, sc, b}), y));
}

// A network through the builder (CPU): the passes fire, and the plan's outputs equal the chain of
// ONNX references computed op by op.
TEST(FusedOps, PassesFuseTheExportedPatterns) {
  std::mt19937_64 rng(11);
  NetworkDefinition net(reg());
  int consts = 0;
  auto cst = [&](TensorValue v) {
    return *net.addConstant("c" + std::to_string(consts++), std::move(v));
  };
  const auto w = randomTensor(DataType::kFloat32, {4, 4, 3, 3}, rng, -0.3, 0.3);
  const auto mw = randomTensor(DataType::kFloat32, {144, 10}, rng, -0.1, 0.1);
  const auto mb = randomTensor(DataType::kFloat32, {10}, rng);
  const auto lns = randomTensor(DataType::kFloat32, {10}, rng);
  const auto xin = randomTensor(DataType::kFloat32, {2, 4, 6, 6}, rng);
  auto x = *net.addInput("x", DataType::kFloat32, {2, 4, 6, 6});
  auto c = (*net.addOp("ai.onnx::Conv", {x, cst(w)}, {{"pads", std::vector<int64_t>{1, 1, 1, 1}}},
                       "conv"))[0];
  auto add = (*net.addOp("ai.onnx::Add", {c, x}, {}, "add"))[0];
  auto relu = (*net.addOp("ai.onnx::Relu", {add}, {}, "relu"))[0];
  auto f = (*net.addOp("ai.onnx::Flatten", {relu}, {}, "flatten"))[0];
  auto mm = (*net.addOp("ai.onnx::MatMul", {f, cst(mw)}, {}, "fc"))[0];
  auto mmb = (*net.addOp("ai.onnx::Add", {mm, cst(mb)}, {}, "fc_bias"))[0];
  auto dbl = (*net.addOp("ai.onnx::Add", {mmb, mmb}, {}, "double"))[0];
  auto ln = (*net.addOp("ai.onnx::LayerNormalization", {dbl, cst(lns)}, {}, "ln"))[0];
  ASSERT_TRUE(net.markOutput(ln, "y").isOk());
  auto plan = Builder(reg()).buildSerializedNetwork(net, BuilderConfig{});
  ASSERT_TRUE(plan.isOk()) << plan.status().message();
  auto e = Engine::loadMemory(std::move(*plan), "fused.plan", reg());
  ASSERT_TRUE(e.isOk()) << e.status().message();
  auto op_of = opsOf(**e);
  EXPECT_EQ(op_of["conv+add+relu"], "opforge::FusedConv v1") << (*e)->inspect();
  EXPECT_EQ(op_of["fc+fc_bias"], "opforge::FusedMatMul v1") << (*e)->inspect();
  EXPECT_EQ(op_of["double+ln"], "opforge::FusedAddLayerNorm v1") << (*e)->inspect();
  auto run = runPlan(**e, {{"x", &xin}});
  ASSERT_TRUE(run.isOk()) << run.status().message();
  const TensorValue& g = *run;
  // The same chain, op by op.
  auto y = run1("ai.onnx::Conv", {{"pads", std::vector<int64_t>{1, 1, 1, 1}}}, {xin, w});
  y = run1("ai.onnx::Relu", {}, {run1("ai.onnx::Add", {}, {y, xin})});
  y = run1("ai.onnx::Flatten", {}, {y});
  y = run1("ai.onnx::Add", {}, {run1("ai.onnx::MatMul", {}, {y, mw}), mb});
  y = run1("ai.onnx::Add", {}, {y, y});
  y = run1("ai.onnx::LayerNormalization", {}, {y, lns});
  EXPECT_TRUE(allClose(g, y, Tolerance{1e-5, 1e-5}));
}

// SiLU as PyTorch exports it, x * Sigmoid(x), after a Conv (with bias) and after a MatMul + bias:
// each chain becomes one fused layer with activation silu, equal to the chain; a Sigmoid whose
// result is read elsewhere too keeps its chain unfused.
TEST(FusedOps, SiluAfterConvAndMatMulIsFused) {
  std::mt19937_64 rng(23);
  NetworkDefinition net(reg());
  int consts = 0;
  auto cst = [&](TensorValue v) {
    return *net.addConstant("c" + std::to_string(consts++), std::move(v));
  };
  auto op = [&](const char* key, std::vector<TensorRef> in, const char* name, Attrs a = {}) {
    return (*net.addOp(key, in, a, name))[0];
  };
  const auto w = randomTensor(DataType::kFloat32, {6, 4, 3, 3}, rng, -0.4, 0.4);
  const auto cb = randomTensor(DataType::kFloat32, {6}, rng);
  const auto mw = randomTensor(DataType::kFloat32, {9, 5}, rng, -0.5, 0.5);
  const auto mb = randomTensor(DataType::kFloat32, {5}, rng);
  const auto xin = randomTensor(DataType::kFloat32, {2, 4, 3, 3}, rng, -3, 3);
  auto x = *net.addInput("x", DataType::kFloat32, {2, 4, 3, 3});
  auto c = op("ai.onnx::Conv", {x, cst(w), cst(cb)}, "conv",
              {{"pads", std::vector<int64_t>{1, 1, 1, 1}}});
  auto cs = op("ai.onnx::Mul", {c, op("ai.onnx::Sigmoid", {c}, "conv_sigmoid")}, "conv_silu");
  auto r =
      op("ai.onnx::Reshape", {cs, cst([] {
                                TensorValue t{{DataType::kInt64, {2}}, std::vector<uint8_t>(16)};
                                const int64_t d[2] = {12, 9};
                                std::memcpy(t.data.data(), d, 16);
                                return t;
                              }())},
         "rows");
  auto mm = op("ai.onnx::Add", {op("ai.onnx::MatMul", {r, cst(mw)}, "fc"), cst(mb)}, "fc_bias");
  auto sig = op("ai.onnx::Sigmoid", {mm}, "fc_sigmoid");
  auto ms = op("ai.onnx::Mul", {sig, mm}, "fc_silu");
  ASSERT_TRUE(net.markOutput(ms, "y").isOk());
  // A Sigmoid read twice (here also a network output): its chain stays as it is.
  auto c2 = op("ai.onnx::Conv", {x, cst(w)}, "conv2", {{"pads", std::vector<int64_t>{1, 1, 1, 1}}});
  auto s2 = op("ai.onnx::Sigmoid", {c2}, "kept_sigmoid");
  ASSERT_TRUE(net.markOutput(op("ai.onnx::Mul", {c2, s2}, "kept_mul"), "z").isOk());
  ASSERT_TRUE(net.markOutput(s2, "s").isOk());
  auto plan = Builder(reg()).buildSerializedNetwork(net, BuilderConfig{});
  ASSERT_TRUE(plan.isOk()) << plan.status().message();
  auto e = Engine::loadMemory(std::move(*plan), "silu.plan", reg());
  ASSERT_TRUE(e.isOk()) << e.status().message();
  auto op_of = opsOf(**e);
  EXPECT_EQ(op_of["conv+conv_sigmoid+conv_silu"], "opforge::FusedConv v1") << (*e)->inspect();
  EXPECT_EQ(op_of["fc+fc_bias+fc_sigmoid+fc_silu"], "opforge::FusedMatMul v1") << (*e)->inspect();
  EXPECT_EQ(op_of["kept_mul"], "ai.onnx::Mul v1") << (*e)->inspect();
  auto run = runPlan(**e, {{"x", &xin}});
  ASSERT_TRUE(run.isOk()) << run.status().message();
  const TensorValue& g = *run;
  auto silu = [&](const TensorValue& v) {
    return run1("ai.onnx::Mul", {}, {v, run1("ai.onnx::Sigmoid", {}, {v})});
  };
  auto y = silu(run1("ai.onnx::Conv", {{"pads", std::vector<int64_t>{1, 1, 1, 1}}}, {xin, w, cb}));
  TensorValue rows = y;
  rows.desc.dims = {12, 9};
  y = silu(run1("ai.onnx::Add", {}, {run1("ai.onnx::MatMul", {}, {rows, mw}), mb}));
  EXPECT_TRUE(allClose(g, y, Tolerance{1e-5, 1e-5}));
  // The activation alone, far into both tails (no overflow: exp(-x) for x < 0 is never formed).
  for (double v : {-1000.0, -30.0, -1.0, 0.0, 0.5, 30.0, 1000.0}) {
    const double want = v / (1 + std::exp(-v));
    EXPECT_NEAR(applyActivation(v, Activation::kSilu), want, 1e-12 * (1 + std::fabs(want))) << v;
  }
}

// The tensor-core tactics (FusedMatMul 10-12, FusedConv 30-31 and 52) are offered exactly where
// their 16-byte tile loads are legal: FP16/BF16, N, K and the row strides multiples of 8, A not
// transposed, and for the convolution a channels-last 1x1 one. No GPU is needed to ask.
bool mmaApplies(const char* op_name, const AttrMap& given, int32_t tactic,
                std::vector<TensorDesc> in, std::vector<TensorDesc> out) {
  // A refusal must come from the tactic, not from the plumbing around it.
  const RegisteredOp* op = reg()->find(op_name);
  if (op == nullptr) {
    ADD_FAILURE() << op_name << " is not registered";
    return false;
  }
  auto attrs = op->validateAttrs("n", given);
  if (!attrs.isOk()) {
    ADD_FAILURE() << attrs.status().message();
    return false;
  }
  auto inst = op->instantiate("n", *attrs);
  if (!inst.isOk()) {
    ADD_FAILURE() << inst.status().message();
    return false;
  }
  size_t ws = 0;
  return (*inst)->tacticApplies(tactic, in, out, &ws);
}

TEST(FusedOps, TensorCoreGemmTacticsApplyWhereTheirTilesLoad) {
  const RegisteredOp* mm = reg()->find("opforge::FusedMatMul");
  ASSERT_NE(mm, nullptr);
  const auto& ts = mm->schema().tactics;
  if (std::none_of(ts.begin(), ts.end(), [](const auto& t) { return t.name == "cuda.mma128"; }))
    GTEST_SKIP() << "built without CUDA: no cuda.mma tactics";
  using D = DataType;
  auto td = [](D t, std::vector<int64_t> d, Format f = Format::kLinear) {
    TensorDesc x{t, std::move(d)};
    x.format = f;
    return x;
  };
  AttrMap gelu;
  gelu.set("activation", std::string("gelu"));
  for (int32_t tactic : {10, 11}) {
    for (D t : {D::kFloat16, D::kBFloat16})
      EXPECT_TRUE(mmaApplies("opforge::FusedMatMul", gelu, tactic,
                             {td(t, {300, 200}), td(t, {200, 136}), td(t, {136})},
                             {td(t, {300, 136})}))
          << tactic;
    EXPECT_FALSE(mmaApplies("opforge::FusedMatMul", gelu, tactic,
                            {td(D::kFloat32, {300, 200}), td(D::kFloat32, {200, 136})},
                            {td(D::kFloat32, {300, 136})}))
        << "FP32 stays on cuBLASLt";
    EXPECT_FALSE(mmaApplies("opforge::FusedMatMul", gelu, tactic,
                            {td(D::kFloat16, {300, 36}), td(D::kFloat16, {36, 136})},
                            {td(D::kFloat16, {300, 136})}))
        << "K = 36: a 16-byte chunk would straddle the end of a row";
    EXPECT_FALSE(mmaApplies("opforge::FusedMatMul", gelu, tactic,
                            {td(D::kFloat16, {300, 200}), td(D::kFloat16, {200, 36})},
                            {td(D::kFloat16, {300, 36})}))
        << "N = 36";
  }
  AttrMap tb;
  tb.set("transB", int64_t{1});
  EXPECT_TRUE(mmaApplies("opforge::FusedMatMul", tb, 10,
                         {td(D::kFloat16, {2, 130, 72}), td(D::kFloat16, {40, 72})},
                         {td(D::kFloat16, {2, 130, 40})}));
  // FusedConv: a channels-last 1x1 convolution only (the HWC combination: every position HWC).
  AttrMap silu;
  silu.set("activation", std::string("silu"));
  const auto hwc = Format::kHWC;
  for (int32_t tactic : {30, 31}) {
    EXPECT_TRUE(mmaApplies("opforge::FusedConv", silu, tactic,
                           {td(D::kFloat16, {2, 40, 15, 17}, hwc),
                            td(D::kFloat16, {112, 40, 1, 1}, hwc), td(D::kFloat16, {112}, hwc)},
                           {td(D::kFloat16, {2, 112, 15, 17}, hwc)}))
        << tactic;
    EXPECT_FALSE(mmaApplies("opforge::FusedConv", silu, tactic,
                            {td(D::kFloat16, {2, 40, 15, 17}), td(D::kFloat16, {112, 40, 1, 1}),
                             td(D::kFloat16, {112})},
                            {td(D::kFloat16, {2, 112, 15, 17})}))
        << "NCHW";
  }
  AttrMap pads = silu;
  pads.set("pads", std::vector<int64_t>{1, 1, 1, 1});
  EXPECT_FALSE(
      mmaApplies("opforge::FusedConv", pads, 30,
                 {td(D::kFloat16, {2, 40, 15, 17}, hwc), td(D::kFloat16, {112, 40, 3, 3}, hwc)},
                 {td(D::kFloat16, {2, 112, 15, 17}, hwc)}))
      << "3x3";
  // The short-K kernel (FusedMatMul 12, FusedConv 52): K up to 64, N and K multiples of 8.
  EXPECT_TRUE(
      mmaApplies("opforge::FusedMatMul", gelu, 12,
                 {td(D::kFloat16, {300, 24}), td(D::kFloat16, {24, 136}), td(D::kFloat16, {136})},
                 {td(D::kFloat16, {300, 136})}));
  EXPECT_TRUE(mmaApplies("opforge::FusedMatMul", tb, 12,
                         {td(D::kBFloat16, {2, 130, 64}), td(D::kBFloat16, {40, 64})},
                         {td(D::kBFloat16, {2, 130, 40})}));
  EXPECT_FALSE(mmaApplies("opforge::FusedMatMul", gelu, 12,
                          {td(D::kFloat16, {300, 72}), td(D::kFloat16, {72, 136})},
                          {td(D::kFloat16, {300, 136})}))
      << "K = 72: past the registers B's fragments may take";
  EXPECT_TRUE(mmaApplies("opforge::FusedConv", silu, 52,
                         {td(D::kFloat16, {2, 16, 15, 17}, hwc),
                          td(D::kFloat16, {96, 16, 1, 1}, hwc), td(D::kFloat16, {96}, hwc)},
                         {td(D::kFloat16, {2, 96, 15, 17}, hwc)}));
  EXPECT_FALSE(mmaApplies("opforge::FusedConv", silu, 52,
                          {td(D::kFloat16, {2, 96, 15, 17}, hwc),
                           td(D::kFloat16, {16, 96, 1, 1}, hwc), td(D::kFloat16, {16}, hwc)},
                          {td(D::kFloat16, {2, 16, 15, 17}, hwc)}))
      << "K = 96";
}

}  // namespace
