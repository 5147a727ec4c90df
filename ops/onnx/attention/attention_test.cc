// ai.onnx::Attention on the CPU: one query over two keys worked out by hand, a fully masked row
// (zeros, not NaN), the KV cache outputs, and bad input named with the node, the op and the value.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

#include "op_harness.h"

using namespace opforge;
using namespace opforge::test;

namespace {
TensorValue bools(const std::vector<int64_t>& dims, const std::vector<uint8_t>& v) {
  TensorValue t;
  t.desc = TensorDesc{DataType::kBool, dims};
  t.data = v;
  return t;
}
// runEngine with optional inputs left out (a TensorValue of undefined type); Y only.
Result<std::vector<double>> runY(const Attrs& attrs, const std::vector<TensorValue>& inputs) {
  auto reg = Registry::global();
  NetworkDefinition net(reg);
  std::vector<TensorRef> refs;
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (inputs[i].desc.dtype == DataType::kUndefined) {
      refs.push_back(TensorRef{});
      continue;
    }
    OPFORGE_ASSIGN_OR_RETURN(
        auto r, net.addInput("in" + std::to_string(i), inputs[i].desc.dtype, inputs[i].desc.dims));
    refs.push_back(r);
  }
  OPFORGE_ASSIGN_OR_RETURN(auto outs, net.addOp("ai.onnx::Attention", refs, attrs, "attn"));
  OPFORGE_RETURN_IF_ERROR(net.markOutput(outs[0], "y"));
  Builder b(reg);
  OPFORGE_ASSIGN_OR_RETURN(auto plan, b.buildSerializedNetwork(net, BuilderConfig{}));
  OPFORGE_ASSIGN_OR_RETURN(auto engine, Engine::loadMemory(std::move(plan), "attn", reg));
  OPFORGE_ASSIGN_OR_RETURN(auto ctx, engine->createExecutionContext());
  for (size_t i = 0; i < inputs.size(); ++i)
    if (inputs[i].desc.dtype != DataType::kUndefined)
      OPFORGE_RETURN_IF_ERROR(
          ctx->setInput("in" + std::to_string(i), inputs[i].data.data(), inputs[i].data.size()));
  OPFORGE_RETURN_IF_ERROR(ctx->execute());
  OPFORGE_ASSIGN_OR_RETURN(Tensor t, ctx->output("y"));
  TensorValue y;
  y.desc = t.desc;
  y.data.assign(static_cast<const uint8_t*>(t.data),
                static_cast<const uint8_t*>(t.data) + t.bytes());
  return toDoubles(y);
}
}  // namespace

TEST(Attention, OneQueryTwoKeysByHand) {
  // d = 1, scale 1: scores q * k = (0.5, -1) with a past key 2 first: keys (2, 0.5), values (3, -1)
  // -> scores (2 * 1, 0.5 * 1) for q = 1; Y = (3 e^2 - e^0.5) / (e^2 + e^0.5).
  const Attrs a{{"scale", 1.0}, {"_onnx_num_outputs", int64_t{4}}};
  auto r = runEngine(Registry::global(), "ai.onnx::Attention", a,
                     {fromFloats({1, 1, 1, 1}, {1}), fromFloats({1, 1, 1, 1}, {0.5f}),
                      fromFloats({1, 1, 1, 1}, {-1}), fromFloats({1, 2}, {0, 0}),
                      fromFloats({1, 1, 1, 1}, {2}), fromFloats({1, 1, 1, 1}, {3})});
  ASSERT_TRUE(r.isOk()) << r.status().message();
  const double e2 = std::exp(2.0), e05 = std::exp(0.5);
  EXPECT_NEAR(toDoubles(r->outputs[0])[0], (3 * e2 - e05) / (e2 + e05), 1e-6);
  EXPECT_EQ(toDoubles(r->outputs[1]), (std::vector<double>{2, 0.5}));  // present_key
  EXPECT_EQ(toDoubles(r->outputs[2]), (std::vector<double>{3, -1}));   // present_value
  const auto qk = toDoubles(r->outputs[3]);                            // mode 0: the scores
  EXPECT_NEAR(qk[0], 2.0, 1e-6);
  EXPECT_NEAR(qk[1], 0.5, 1e-6);
}

TEST(Attention, AFullyMaskedRowIsZero) {
  std::mt19937_64 rng(5);
  // Row 0 of the mask is all false, row 1 keeps key 1.
  auto r = runEngine(
      Registry::global(), "ai.onnx::Attention", {},
      {randomTensor(DataType::kFloat32, {1, 1, 2, 4}, rng),
       randomTensor(DataType::kFloat32, {1, 1, 3, 4}, rng),
       randomTensor(DataType::kFloat32, {1, 1, 3, 4}, rng), bools({2, 3}, {0, 0, 0, 0, 1, 0})});
  ASSERT_TRUE(r.isOk()) << r.status().message();
  const auto y = toDoubles(r->outputs[0]);
  for (int c = 0; c < 4; ++c) EXPECT_EQ(y[c], 0.0) << c;
  for (int c = 4; c < 8; ++c) EXPECT_FALSE(std::isnan(y[c])) << c;
}

TEST(Attention, BadInputIsNamed) {
  NetworkDefinition net(Registry::global());
  auto q = *net.addInput("q", DataType::kFloat32, {2, 6, 5, 8});
  auto k = *net.addInput("k", DataType::kFloat32, {2, 4, 7, 8});
  auto k2 = *net.addInput("k2", DataType::kFloat32, {2, 2, 7, 8});
  auto v = *net.addInput("v", DataType::kFloat32, {2, 2, 7, 8});
  auto v4 = *net.addInput("v4", DataType::kFloat32, {2, 4, 7, 8});
  auto q3 = *net.addInput("q3", DataType::kFloat32, {2, 5, 24});
  auto mask = *net.addInput("mask", DataType::kFloat32, {5, 9});
  auto mask_i = *net.addInput("mask_i", DataType::kInt32, {5, 7});
  auto past = *net.addInput("past", DataType::kFloat32, {2, 2, 3, 8});
  auto nonpad = *net.addInput("nonpad", DataType::kInt64, {2});
  expectError(net.addOp("ai.onnx::Attention", {q, k, v4}, {}, "attn_node").status(),
              {"attn_node", "ai.onnx::Attention", "must divide the query heads"});
  expectError(net.addOp("ai.onnx::Attention", {q, k2, v, mask}, {}, "attn_node").status(),
              {"attn_node", "'attn_mask' has 9 keys; there are only 7"});
  expectError(net.addOp("ai.onnx::Attention", {q, k2, v, mask_i}, {}, "attn_node").status(),
              {"attn_node", "'attn_mask' must be BOOL or a float type", "INT32"});
  expectError(net.addOp("ai.onnx::Attention", {q3, q3, q3}, {}, "attn_node").status(),
              {"attn_node", "q_num_heads and kv_num_heads"});
  expectError(net.addOp("ai.onnx::Attention", {q3, q3, q3},
                        {{"q_num_heads", int64_t{5}}, {"kv_num_heads", int64_t{5}}}, "attn_node")
                  .status(),
              {"attn_node", "hidden size 24, not a multiple of its 5 heads"});
  expectError(
      net.addOp("ai.onnx::Attention", {q, k2, v, TensorRef{}, past}, {}, "attn_node").status(),
      {"attn_node", "past_key and past_value must be given together"});
  expectError(
      net.addOp("ai.onnx::Attention", {q, k2, v, TensorRef{}, past, past, nonpad}, {}, "attn_node")
          .status(),
      {"attn_node", "nonpad_kv_seqlen cannot be combined"});
  expectError(net.addOp("ai.onnx::Attention", {q, k2, v}, {{"qk_matmul_output_mode", int64_t{4}}},
                        "attn_node")
                  .status(),
              {"attn_node", "qk_matmul_output_mode must be 0, 1, 2 or 3, got 4"});
  // A padded length beyond the keys: an error at run time naming the value and its position.
  std::mt19937_64 rng(2);
  auto run = runY({}, {randomTensor(DataType::kFloat32, {2, 2, 3, 4}, rng),
                       randomTensor(DataType::kFloat32, {2, 2, 5, 4}, rng),
                       randomTensor(DataType::kFloat32, {2, 2, 5, 4}, rng), TensorValue{},
                       TensorValue{}, TensorValue{}, fromInt64s({2}, {5, 6})});
  ASSERT_FALSE(run.isOk());
  expectError(run.status(), {"Attention", "'nonpad_kv_seqlen' holds 6 at position 1", "[0, 5]"});
}
