// The Q/DQ fusions (qdq_conv_fusion, qdq_matmul_fusion) on the CPU: the explicitly quantized form
// becomes one QLinearConv / QLinearMatMul layer, its results equal the unfused Q/DQ chain's
// (constant folding off: no fusion) within one quantization step, and the forms they must not take
// stay as they are.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>

#include "op_harness.h"

using namespace opforge;
using namespace opforge::test;

namespace {

struct Built {
  std::shared_ptr<Engine> engine;
  std::vector<std::string> log;
};

// The explicitly quantized Conv (or MatMul): x -> Q -> DQ -> op(DQ(weights int8), bias) -> Q ->
// DQ -> y; `extra_use` also makes the op's float output a second network output; `qweights` gives
// the weights as QuantizeLinear of float constants (ModelOpt's form) instead of int8 constants;
// `relu` puts a Relu between the product and its QuantizeLinear.
Result<Built> build(bool matmul, bool fold, bool extra_use, std::mt19937_64& rng,
                    bool qweights = false, bool relu = false) {
  NetworkDefinition net(contribRegistry());
  int consts = 0;
  auto constant = [&](TensorValue v) {
    return *net.addConstant("c" + std::to_string(consts++), v);
  };
  auto op = [&](const char* key, std::vector<TensorRef> in, const char* name, Attrs a = {}) {
    return (*net.addOp(key, in, a, name))[0];
  };
  const int64_t m = 6;
  auto x = *net.addInput("x", DataType::kFloat32,
                         matmul ? std::vector<int64_t>{4, 8} : std::vector<int64_t>{1, 3, 7, 7});
  auto sx = constant(fromValues(DataType::kFloat32, {}, {0.02}));
  auto zx = constant(fromValues(DataType::kUInt8, {}, {128}));
  auto xq = op("ai.onnx::QuantizeLinear", {x, sx, zx}, "x_q");
  auto xd = op("ai.onnx::DequantizeLinear", {xq, sx, zx}, "x_dq");
  std::uniform_int_distribution<int> wi(-127, 127);
  const std::vector<int64_t> wdims =
      matmul ? std::vector<int64_t>{8, m} : std::vector<int64_t>{m, 3, 3, 3};
  std::vector<double> wv(static_cast<size_t>(TensorDesc{DataType::kInt8, wdims}.numel()));
  for (auto& v : wv) v = wi(rng);
  std::vector<double> sw(m);
  for (int64_t i = 0; i < m; ++i) sw[i] = 0.002 + 0.0005 * static_cast<double>(i);
  auto swc = constant(fromValues(DataType::kFloat32, {m}, sw));
  auto zw = constant(fromValues(DataType::kInt8, {m}, std::vector<double>(m, 0)));
  TensorRef wq;
  if (qweights) {  // float weights whose quantization gives wv back
    const int64_t per = static_cast<int64_t>(wv.size()) / m;
    std::vector<double> wf(wv.size());
    for (size_t i = 0; i < wv.size(); ++i) {
      const int64_t ch = matmul ? static_cast<int64_t>(i) % m : static_cast<int64_t>(i) / per;
      wf[i] = wv[i] * sw[ch];
    }
    wq = op("ai.onnx::QuantizeLinear",
            {constant(fromValues(DataType::kFloat32, wdims, wf)), swc, zw}, "w_q",
            {{"axis", int64_t{matmul ? 1 : 0}}});
  } else {
    wq = constant(fromValues(DataType::kInt8, wdims, wv));
  }
  auto wd =
      op("ai.onnx::DequantizeLinear", {wq, swc, zw}, "w_dq", {{"axis", int64_t{matmul ? 1 : 0}}});
  TensorRef y;
  if (matmul) {
    y = op("ai.onnx::MatMul", {xd, wd}, "matmul");
  } else {
    std::vector<double> bias(m);
    for (int64_t i = 0; i < m; ++i) bias[i] = 0.1 * static_cast<double>(i) - 0.2;
    y = op("ai.onnx::Conv", {xd, wd, constant(fromValues(DataType::kFloat32, {m}, bias))}, "conv",
           {{"pads", std::vector<int64_t>{1, 1, 1, 1}}});
  }
  if (relu) y = op("ai.onnx::Relu", {y}, "relu");
  auto sy = constant(fromValues(DataType::kFloat32, {}, {0.05}));
  auto zy = constant(fromValues(DataType::kInt8, {}, {-3}));
  auto yq = op("ai.onnx::QuantizeLinear", {y, sy, zy}, "y_q");
  OPFORGE_RETURN_IF_ERROR(
      net.markOutput(op("ai.onnx::DequantizeLinear", {yq, sy, zy}, "y_dq"), "y"));
  if (extra_use) OPFORGE_RETURN_IF_ERROR(net.markOutput(y, "float_y"));
  Built b;
  BuilderConfig cfg;
  cfg.constant_folding = fold;
  cfg.log = [&](const std::string& l) { b.log.push_back(l); };
  OPFORGE_ASSIGN_OR_RETURN(auto plan, Builder(contribRegistry()).buildSerializedNetwork(net, cfg));
  OPFORGE_ASSIGN_OR_RETURN(b.engine,
                           Engine::loadMemory(std::move(plan), "qdq.plan", contribRegistry()));
  return b;
}

Result<TensorValue> runY(Engine& e, const TensorValue& x) {
  OPFORGE_ASSIGN_OR_RETURN(auto ctx, e.createExecutionContext());
  OPFORGE_RETURN_IF_ERROR(ctx->setInput("x", x.data.data(), x.data.size()));
  OPFORGE_RETURN_IF_ERROR(ctx->execute());
  OPFORGE_ASSIGN_OR_RETURN(Tensor got, ctx->output("y"));
  TensorValue v{got.desc, {}};
  v.data.assign(static_cast<const uint8_t*>(got.data),
                static_cast<const uint8_t*>(got.data) + got.bytes());
  return v;
}

bool hasLayer(const Engine& e, const std::string& op) {
  for (const auto& l : e.layers())
    if (l.op == op) return true;
  return false;
}

}  // namespace

TEST(QdqFusion, QuantizedConvAndMatMulBecomeOneIntegerLayerWithTheChainsResults) {
  for (int form = 0; form < 8; ++form) {
    const bool matmul = form % 2 == 1, qweights = form % 4 >= 2, relu = form >= 4;
    SCOPED_TRACE(std::string(matmul ? "MatMul" : "Conv") + (qweights ? ", Q(float weights)" : "") +
                 (relu ? ", Relu" : ""));
    const std::string fused_op = matmul ? "ai.onnx::QLinearMatMul v1" : "ai.onnx::QLinearConv v1";
    std::mt19937_64 rng(21);
    auto fused = build(matmul, true, false, rng, qweights, relu);
    ASSERT_TRUE(fused.isOk()) << fused.status().message();
    rng.seed(21);
    auto chain = build(matmul, false, false, rng, qweights, relu);
    ASSERT_TRUE(chain.isOk()) << chain.status().message();
    EXPECT_TRUE(hasLayer(*fused->engine, fused_op)) << fused->engine->inspect();
    EXPECT_FALSE(hasLayer(*chain->engine, fused_op)) << chain->engine->inspect();
    const std::string line =
        std::string(matmul ? "qdq_matmul_fusion: matmul" : "qdq_conv_fusion: conv") +
        (relu ? "+relu" : "") + "+y_q -> ai.onnx::" + (matmul ? "QLinearMatMul" : "QLinearConv");

    bool logged = false;
    for (const auto& l : fused->log) logged = logged || l == line;
    EXPECT_TRUE(logged) << "the fusion is not in the build log";
    const auto x = randomTensor(
        DataType::kFloat32, matmul ? std::vector<int64_t>{4, 8} : std::vector<int64_t>{1, 3, 7, 7},
        rng, -2.5, 2.5);
    auto a = runY(*fused->engine, x), b = runY(*chain->engine, x);
    ASSERT_TRUE(a.isOk() && b.isOk()) << a.status().message() << b.status().message();
    const auto ya = toDoubles(*a), yb = toDoubles(*b);
    ASSERT_EQ(ya.size(), yb.size());
    int differ = 0, saturated = 0;
    for (size_t i = 0; i < ya.size(); ++i) {
      // The chain rounds the float result once; the integer layer sums exactly and rounds once:
      // at most one step (0.05) apart.
      EXPECT_LE(std::fabs(ya[i] - yb[i]), 0.05 + 1e-6) << "element " << i;
      differ += ya[i] != yb[i];
      saturated += std::fabs(yb[i] - 0.05 * -3) >= 0.05 * 127;
    }
    EXPECT_LE(differ, static_cast<int>(ya.size()) / 20) << "more than 5% of the outputs differ";
    EXPECT_LT(saturated, static_cast<int>(ya.size()) / 2);
  }
}

TEST(QdqFusion, AFloatOutputUsedElsewhereIsNotFused) {
  for (bool matmul : {false, true}) {
    std::mt19937_64 rng(4);
    auto b = build(matmul, true, true, rng);
    ASSERT_TRUE(b.isOk()) << b.status().message();
    EXPECT_FALSE(
        hasLayer(*b->engine, matmul ? "ai.onnx::QLinearMatMul v1" : "ai.onnx::QLinearConv v1"))
        << b->engine->inspect();
  }
}
