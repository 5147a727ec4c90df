// opforge::FusedGelu: the reference against independent formulas for every type, form and stage,
// through the engine, and its attribute errors.
#include <gtest/gtest.h>

#include <cmath>

#include "op_harness.h"

using namespace opforge;
using namespace opforge::test;

namespace {
const char* kOp = "opforge::FusedGelu";

double geluErf(double x) {
  return 0.5 * x * (1.0 + std::erf(x / std::sqrt(2.0)));
}
double geluTanh(double x) {
  return 0.5 * x * (1.0 + std::tanh(std::sqrt(2.0 / M_PI) * (x + 0.044715 * x * x * x)));
}

// The expected output: f applied to every element in double, rounded to the tensor's type.
template <typename F>
TensorValue expected(const TensorValue& x, F f) {
  TensorValue y = x;
  for (int64_t i = 0; i < x.desc.numel(); ++i)
    storeFromDouble(y.data.data(), x.desc.dtype, i,
                    f(loadAsDouble(x.data.data(), x.desc.dtype, i)));
  return y;
}
}  // namespace

TEST(FusedGelu, MatchesTheFormulasForEveryTypeAndForm) {
  std::mt19937_64 rng(11);
  int trial = 0;
  for (DataType t :
       {DataType::kFloat32, DataType::kFloat16, DataType::kBFloat16, DataType::kFloat64}) {
    for (const char* approx : {"none", "tanh"}) {
      std::vector<int64_t> dims = {1 + static_cast<int64_t>(rng() % 5),
                                   1 + static_cast<int64_t>(rng() % 37)};
      TensorValue x = randomTensor(t, dims, rng, -6, 6);
      Attrs a{{"approximate", std::string(approx)}};
      checkOp(contribRegistry(), kOp, a, {x});
      auto r = runKernel(*contribRegistry(), kOp, a, {x}, 0xff);
      ASSERT_TRUE(r.isOk()) << r.status().message();
      const bool tanh_form = std::string(approx) == "tanh";
      EXPECT_TRUE(
          allClose(r->outputs[0],
                   expected(x, [&](double v) { return tanh_form ? geluTanh(v) : geluErf(v); })))
          << dtypeName(t) << " " << approx << " trial " << trial++;
    }
  }
}

TEST(FusedGelu, SeedGeluOfGeluIsOneNodeWithChain1) {
  std::mt19937_64 rng(5);
  TensorValue x = randomTensor(DataType::kFloat32, {4, 33}, rng, -5, 5);
  auto once = runKernel(*contribRegistry(), kOp, {}, {x}, 0xff);
  ASSERT_TRUE(once.isOk());
  auto twice = runKernel(*contribRegistry(), kOp, {}, {once->outputs[0]}, 0xff);
  auto fused = runKernel(*contribRegistry(), kOp, {{"chain", std::vector<int32_t>{1}}}, {x}, 0xff);
  ASSERT_TRUE(twice.isOk() && fused.isOk());
  EXPECT_TRUE(
      allClose(fused->outputs[0], expected(x, [](double v) { return geluErf(geluErf(v)); })));
  EXPECT_TRUE(
      allClose(fused->outputs[0], twice->outputs[0]));  // one rounding less, within fp32 tolerance
}

TEST(FusedGelu, EveryChainStage) {
  std::mt19937_64 rng(8);
  const std::vector<int32_t> chain = {2, 3, 6, 7, 4, 1, 5, 8};
  const std::vector<float> scalars = {0, 0, -1.5f, 0.25f, 0, 0, 0, 3.0f};
  for (DataType t :
       {DataType::kFloat32, DataType::kFloat16, DataType::kBFloat16, DataType::kFloat64}) {
    TensorValue x = randomTensor(t, {3, 4, 5}, rng, -4, 4);
    Attrs a{{"approximate", std::string("tanh")}, {"chain", chain}, {"chain_scalars", scalars}};
    checkOp(contribRegistry(), kOp, a, {x});
    auto r = runKernel(*contribRegistry(), kOp, a, {x}, 0xff);
    ASSERT_TRUE(r.isOk()) << r.status().message();
    auto f = [](double v) {
      v = geluTanh(v);             // head
      v = geluTanh(v);             // 2
      v = v < 0 ? 0 : v;           // 3
      v = v * -1.5;                // 6
      v = v + 0.25;                // 7
      v = std::tanh(v);            // 4
      v = geluErf(v);              // 1
      v = 1 / (1 + std::exp(-v));  // 5
      return v / 3.0;              // 8
    };
    EXPECT_TRUE(allClose(r->outputs[0], expected(x, f))) << dtypeName(t);
  }
}

TEST(FusedGelu, SpecialValuesAndEmpty) {
  TensorValue x = fromFloats({6}, {NAN, INFINITY, 0.f, -0.f, -30.f, 30.f});
  auto r = runKernel(*contribRegistry(), kOp, {}, {x}, 0xff);
  ASSERT_TRUE(r.isOk());
  auto y = toDoubles(r->outputs[0]);
  EXPECT_TRUE(std::isnan(y[0]));
  EXPECT_EQ(y[1], INFINITY);
  EXPECT_EQ(y[2], 0.0);
  EXPECT_EQ(y[3], 0.0);
  EXPECT_EQ(y[4], 0.0);  // -30 * Phi(-30) underflows to (-)0
  EXPECT_EQ(y[5], 30.0);
  TensorValue empty = fromFloats({0, 3}, {});
  auto e = runKernel(*contribRegistry(), kOp, {}, {empty}, 0xff);
  ASSERT_TRUE(e.isOk()) << e.status().message();
  EXPECT_EQ(e->outputs[0].desc.dims, (std::vector<int64_t>{0, 3}));
}

TEST(FusedGelu, BadAttributesAreNamed) {
  TensorValue x = fromFloats({2}, {1, 2});
  auto expectError = [&](const Attrs& a, const std::string& needle) {
    auto r = runKernel(*contribRegistry(), kOp, a, {x}, 0xff);
    ASSERT_FALSE(r.isOk()) << needle;
    EXPECT_NE(r.status().message().find(needle), std::string::npos) << r.status().message();
  };
  expectError({{"approximate", std::string("fast")}}, "'approximate'");
  expectError({{"chain", std::vector<int32_t>{9}}}, "not a stage code");
  expectError({{"chain", std::vector<int32_t>{0}}}, "not a stage code");
  expectError({{"chain", std::vector<int32_t>{6}}}, "'chain_scalars'");
  expectError({{"chain", std::vector<int32_t>{1, 1}}, {"chain_scalars", std::vector<float>{1}}},
              "one value per");
  expectError({{"chain", std::vector<int32_t>{8}}, {"chain_scalars", std::vector<float>{0}}},
              "divides by zero");
  expectError({{"chain", std::vector<int32_t>(16, 1)}}, "at most 15");
  auto ok = runKernel(*contribRegistry(), kOp, {{"chain", std::vector<int32_t>(15, 3)}}, {x}, 0xff);
  EXPECT_TRUE(ok.isOk()) << ok.status().message();
}

TEST(FusedGelu, DeclaresItsBackward) {
  const RegisteredOp* op = contribRegistry()->find(kOp);
  ASSERT_NE(op, nullptr);
  EXPECT_EQ(op->schema().backward, "opforge::FusedGeluGrad");
  EXPECT_NE(contribRegistry()->find("opforge::FusedGeluGrad"), nullptr);
}
