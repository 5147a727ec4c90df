// MatMul / Gemm: the OpenBLAS path against the naive reference, numpy broadcasting, and the
// engine path against the kernel (op_harness checkOp).
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>

#include "op_harness.h"
#include "ops/onnx/common/gemm.h"

using namespace opforge;
using namespace opforge::test;

using NaiveKernels = ops::ScopedNaiveKernels;

TEST(Gemm, BlasPathMatchesTheNaiveLoop) {
  std::mt19937_64 rng(3);
  std::uniform_real_distribution<float> u(-1, 1);
  struct Case {
    int64_t m, n, k;
    bool ta, tb;
    float alpha, beta;
  };
  const Case cases[] = {{1, 1, 1, false, false, 1, 0},      {7, 5, 3, false, false, 1, 0},
                        {33, 17, 65, true, false, 0.5f, 0}, {16, 40, 9, false, true, 1, 1},
                        {5, 64, 128, true, true, 2, 0.25f}, {3, 4, 0, false, false, 1, 0},
                        {128, 96, 200, false, false, 1, 0}};
  for (const auto& c : cases) {
    std::vector<float> a(static_cast<size_t>(c.m * std::max<int64_t>(c.k, 1))),
        b(static_cast<size_t>(std::max<int64_t>(c.k, 1) * c.n));
    for (auto& v : a) v = u(rng);
    for (auto& v : b) v = u(rng);
    std::vector<float> y0(static_cast<size_t>(c.m * c.n)), y1;
    for (auto& v : y0) v = u(rng);
    y1 = y0;
    const int64_t lda = c.ta ? c.m : c.k, ldb = c.tb ? c.k : c.n;
    ops::gemmNaive<float>(c.ta, c.tb, c.m, c.n, c.k, c.alpha, a.data(), std::max<int64_t>(lda, 1),
                          b.data(), std::max<int64_t>(ldb, 1), c.beta, y0.data(), c.n);
    {
      NaiveKernels fast(false);
      ops::sgemm(c.ta, c.tb, c.m, c.n, c.k, c.alpha, a.data(), std::max<int64_t>(lda, 1), b.data(),
                 std::max<int64_t>(ldb, 1), c.beta, y1.data(), c.n);
    }
    for (size_t i = 0; i < y0.size(); ++i)  // float sums of k products in another order
      ASSERT_NEAR(y1[i], y0[i],
                  1e-5 * (1 + std::fabs(y0[i])) * std::sqrt(static_cast<double>(c.k + 1)))
          << c.m << "x" << c.n << "x" << c.k << " element " << i;
  }
  if (!ops::haveBlas()) GTEST_SKIP() << "built without OpenBLAS: only the naive loop ran";
}

TEST(MatMul, BroadcastingAndPromotionMatchTheReference) {
  std::mt19937_64 rng(11);
  const std::vector<std::pair<std::vector<int64_t>, std::vector<int64_t>>> shapes = {
      {{3, 4}, {4, 5}},          {{4}, {4, 3}},       {{2, 4}, {4}},   {{4}, {4}},
      {{2, 1, 3, 4}, {5, 4, 2}}, {{6, 2, 3}, {3, 7}}, {{1, 8}, {8, 1}}};
  for (DataType t : {DataType::kFloat32, DataType::kFloat16, DataType::kFloat64, DataType::kInt32,
                     DataType::kInt64}) {
    for (const auto& [sa, sb] : shapes) {
      auto a = randomTensor(t, sa, rng, -3, 3), b = randomTensor(t, sb, rng, -3, 3);
      checkOp(contribRegistry(), "ai.onnx::MatMul", {}, {a, b});
    }
  }
}

TEST(MatMul, KnownProductAndBothCpuPathsAgree) {
  // [[1, 2, 3], [4, 5, 6]] x [[1, 0], [0, 1], [1, 1]] = [[4, 5], [10, 11]]
  auto r =
      runEngine(contribRegistry(), "ai.onnx::MatMul", {},
                {fromFloats({2, 3}, {1, 2, 3, 4, 5, 6}), fromFloats({3, 2}, {1, 0, 0, 1, 1, 1})});
  ASSERT_TRUE(r.isOk()) << r.status().message();
  EXPECT_EQ(toDoubles(r->outputs[0]), (std::vector<double>{4, 5, 10, 11}));
  std::mt19937_64 rng(5);
  auto a = randomTensor(DataType::kFloat32, {4, 33, 70}, rng),
       b = randomTensor(DataType::kFloat32, {70, 40}, rng);
  auto fast = runEngine(contribRegistry(), "ai.onnx::MatMul", {}, {a, b});
  NaiveKernels naive(true);
  auto slow = runEngine(contribRegistry(), "ai.onnx::MatMul", {}, {a, b});
  ASSERT_TRUE(fast.isOk() && slow.isOk());
  EXPECT_TRUE(allClose(fast->outputs[0], slow->outputs[0], {1e-4, 1e-4}));
}

TEST(Gemm, AttributesAndBiasBroadcast) {
  std::mt19937_64 rng(2);
  for (int ta = 0; ta < 2; ++ta)
    for (int tb = 0; tb < 2; ++tb)
      for (const std::vector<int64_t>& cdims :
           {std::vector<int64_t>{}, {5}, {1, 5}, {3, 5}, {3, 1}}) {
        auto a = randomTensor(DataType::kFloat32,
                              ta ? std::vector<int64_t>{4, 3} : std::vector<int64_t>{3, 4}, rng);
        auto b = randomTensor(DataType::kFloat32,
                              tb ? std::vector<int64_t>{5, 4} : std::vector<int64_t>{4, 5}, rng);
        auto c = randomTensor(DataType::kFloat32, cdims, rng);
        checkOp(contribRegistry(), "ai.onnx::Gemm",
                {{"transA", int64_t{ta}}, {"transB", int64_t{tb}}, {"alpha", 0.5}, {"beta", 2.0}},
                {a, b, c});
      }
  // Y = A B + C computed by hand.
  auto r = runKernel(
      *contribRegistry(), "ai.onnx::Gemm", {},
      {fromFloats({1, 2}, {1, 2}), fromFloats({2, 2}, {3, 4, 5, 6}), fromFloats({2}, {10, 20})},
      0xff);
  ASSERT_TRUE(r.isOk()) << r.status().message();
  EXPECT_EQ(toDoubles(r->outputs[0]), (std::vector<double>{23, 36}));
}

TEST(Gemm, IntegerOverflowWrapsAndScaledResultsSaturate) {
  // INT64 products and sums that overflow wrap around in two's complement (as the CUDA tactics'
  // integer arithmetic and ONNX Runtime do); computed in signed int64 they were undefined
  // behaviour (UBSan, issue 21). Rows times [4, 2]: 2^62 * 4 = 2^64 = 0 (mod 2^64);
  // 2^62 * 4 + 2^62 * 2 = 2^64 + 2^63 = -2^63; (2^63 - 1) * 4 + 2 = 2^65 - 2 = -2.
  constexpr int64_t k62 = int64_t{1} << 62, kMax = std::numeric_limits<int64_t>::max();
  auto wrapped =
      runEngine(contribRegistry(), "ai.onnx::Gemm", {},
                {fromInt64s({3, 2}, {k62, 0, k62, k62, kMax, 1}), fromInt64s({2, 1}, {4, 2})});
  ASSERT_TRUE(wrapped.isOk()) << wrapped.status().message();
  const auto* y = reinterpret_cast<const int64_t*>(wrapped->outputs[0].data.data());
  EXPECT_EQ(y[0], 0);
  EXPECT_EQ(y[1], std::numeric_limits<int64_t>::min());
  EXPECT_EQ(y[2], -2);
  // With alpha != 1 an integer result goes through double: out of the type's range it saturates
  // (a plain cast of 1e20 to int32 is undefined behaviour); NaN gives 0.
  TensorValue a, b;
  a.desc = TensorDesc{DataType::kInt32, {1, 1}};
  b.desc = a.desc;
  a.data.assign(4, 0);
  b.data.assign(4, 0);
  const int32_t three = 3, minus = -3;
  std::memcpy(a.data.data(), &three, 4);
  std::memcpy(b.data.data(), &three, 4);
  auto big = runEngine(contribRegistry(), "ai.onnx::Gemm", {{"alpha", 1e20}}, {a, b});
  ASSERT_TRUE(big.isOk()) << big.status().message();
  EXPECT_EQ(*reinterpret_cast<const int32_t*>(big->outputs[0].data.data()),
            std::numeric_limits<int32_t>::max());
  std::memcpy(b.data.data(), &minus, 4);
  auto low = runEngine(contribRegistry(), "ai.onnx::Gemm", {{"alpha", 1e20}}, {a, b});
  ASSERT_TRUE(low.isOk()) << low.status().message();
  EXPECT_EQ(*reinterpret_cast<const int32_t*>(low->outputs[0].data.data()),
            std::numeric_limits<int32_t>::min());
  EXPECT_EQ(ops::saturatingCast<int32_t>(std::nan("")), 0);
  EXPECT_EQ(ops::saturatingCast<int64_t>(9.3e18), std::numeric_limits<int64_t>::max());
  EXPECT_EQ(ops::saturatingCast<int64_t>(-9.3e18), std::numeric_limits<int64_t>::min());
  EXPECT_EQ(ops::saturatingCast<uint8_t>(-1.0), 0);
  EXPECT_EQ(ops::saturatingCast<uint8_t>(255.0), 255);
  EXPECT_EQ(ops::saturatingCast<int64_t>(-12345.0), -12345);
}
