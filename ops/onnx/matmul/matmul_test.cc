// MatMul / Gemm: the OpenBLAS path against the naive reference, numpy broadcasting, and the
// engine path against the kernel (op_harness checkOp).
#include <gtest/gtest.h>

#include <cmath>

#include "op_harness.h"
#include "ops/onnx/common/gemm.h"

using namespace opforge;
using namespace opforge::test;

namespace {
struct NaiveKernels {
  explicit NaiveKernels(bool on) : was(ops::naiveKernels()) { ops::setNaiveKernels(on); }
  ~NaiveKernels() { ops::setNaiveKernels(was); }
  bool was;
};
}  // namespace

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
