// ConvInteger, QLinearConv, MatMulInteger and QLinearMatMul: the CPU references against loops
// written here from the ONNX definitions, the requantization's ties and saturation, and the
// parameter checks (ONNX's node tests cover one case of each form; these cover the rest).
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "op_harness.h"

using namespace opforge;
using namespace opforge::test;

namespace {

std::vector<double> uniformInts(size_t n, int lo, int hi, std::mt19937_64& rng) {
  std::uniform_int_distribution<int> u(lo, hi);
  std::vector<double> v(n);
  for (auto& x : v) x = u(rng);
  return v;
}

// The requantization ONNX Runtime's CPU kernels and TensorRT compute: the product in FP32, rounded
// half to even, then the zero point, saturated.
double requant(int64_t acc, float m, double zy, bool s) {
  const float p = static_cast<float>(acc) * m;
  return std::clamp(std::nearbyint(static_cast<double>(p)) + zy, s ? -128.0 : 0.0,
                    s ? 127.0 : 255.0);
}

float mult(float a, float b, float y) {
  return (a * b) / y;
}  // float steps, as numpy float32

}  // namespace

TEST(QLinearMatMul, PerRowAndPerColumnParametersMatchTheDefinition) {
  std::mt19937_64 rng(7);
  const int64_t m = 5, k = 37, n = 6;
  const auto a = uniformInts(m * k, 0, 255, rng), b = uniformInts(k * n, -128, 127, rng);
  const auto za = uniformInts(m, 100, 150, rng), zb = uniformInts(n, -5, 5, rng);
  std::vector<double> sa(m), sb(n);
  for (auto& s : sa) s = 0.01 + 0.001 * static_cast<double>(rng() % 20);
  for (auto& s : sb) s = 0.002 + 0.0005 * static_cast<double>(rng() % 20);
  const double sy = 0.75, zy = -3;
  auto r =
      runEngine(contribRegistry(), "ai.onnx::QLinearMatMul", {},
                {fromValues(DataType::kUInt8, {m, k}, a), fromValues(DataType::kFloat32, {m}, sa),
                 fromValues(DataType::kUInt8, {m}, za), fromValues(DataType::kInt8, {k, n}, b),
                 fromValues(DataType::kFloat32, {n}, sb), fromValues(DataType::kInt8, {n}, zb),
                 fromValues(DataType::kFloat32, {}, {sy}), fromValues(DataType::kInt8, {}, {zy})});
  ASSERT_TRUE(r.isOk()) << r.status().message();
  ASSERT_EQ(r->outputs[0].desc.dtype, DataType::kInt8);
  const auto y = toDoubles(r->outputs[0]);
  int saturated = 0;
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      int64_t acc = 0;
      for (int64_t t = 0; t < k; ++t)
        acc += (static_cast<int64_t>(a[i * k + t]) - static_cast<int64_t>(za[i])) *
               (static_cast<int64_t>(b[t * n + j]) - static_cast<int64_t>(zb[j]));
      const float mm =
          mult(static_cast<float>(sa[i]), static_cast<float>(sb[j]), static_cast<float>(sy));
      const double want = requant(acc, mm, zy, true);
      saturated += std::fabs(want) >= 127;
      EXPECT_EQ(y[i * n + j], want) << "row " << i << " column " << j << " acc " << acc;
    }
  EXPECT_LT(saturated, m * n);  // the data exercise the rounding, not only the bounds
}

TEST(QLinearMatMul, TiesRoundToEvenAndResultsSaturate) {
  // 1 x 1 products: acc * (1 * 1 / 2) + 0 = acc / 2; ties 0.5 -> 0, 1.5 -> 2, 2.5 -> 2, -0.5 -> 0.
  auto one = [](double a) {
    return runEngine(
        contribRegistry(), "ai.onnx::QLinearMatMul", {},
        {fromValues(DataType::kInt8, {1, 1}, {a}), fromValues(DataType::kFloat32, {}, {1}),
         fromValues(DataType::kInt8, {}, {0}), fromValues(DataType::kInt8, {1, 1}, {1}),
         fromValues(DataType::kFloat32, {}, {1}), fromValues(DataType::kInt8, {}, {0}),
         fromValues(DataType::kFloat32, {}, {2}), fromValues(DataType::kUInt8, {}, {10})});
  };
  for (auto [a, want] : std::vector<std::pair<double, double>>{
           {1, 10}, {3, 12}, {5, 12}, {-1, 10}, {-3, 8}, {127, 74}, {-128, 0}}) {
    auto r = one(a);
    ASSERT_TRUE(r.isOk()) << r.status().message();
    EXPECT_EQ(toDoubles(r->outputs[0])[0], want) << "a = " << a;
  }
}

TEST(QLinearMatMul, RequantizesInFp32ThenAddsTheZeroPointAsOnnxRuntimeDoes) {
  // [1, k] x [k, 1] products with a_scale = m, b_scale = y_scale = 1: y = round(fp32(acc) * m) +
  // zy.
  auto one = [](std::vector<double> a, std::vector<double> b, double m, double zy) {
    const int64_t k = static_cast<int64_t>(a.size());
    return runEngine(
        contribRegistry(), "ai.onnx::QLinearMatMul", {},
        {fromValues(DataType::kInt8, {1, k}, a), fromValues(DataType::kFloat32, {}, {m}),
         fromValues(DataType::kInt8, {}, {0}), fromValues(DataType::kInt8, {k, 1}, b),
         fromValues(DataType::kFloat32, {}, {1}), fromValues(DataType::kInt8, {}, {0}),
         fromValues(DataType::kFloat32, {}, {1}), fromValues(DataType::kUInt8, {}, {zy})});
  };
  // acc = 127 * 91 + 72 * 1 = 11629 and m = 0x1.73f288p-10 (a per-channel multiplier of an ONNX
  // Runtime-quantized mobilenet_v3_small): the FP32 product is the tie 16.5 (-> 16), the FP64
  // product 16.50000065 (ONNX's numpy reference: 143). ONNX Runtime gives 142.
  auto r = one({127, 72}, {91, 1}, 0x1.73f288p-10, 126);
  ASSERT_TRUE(r.isOk()) << r.status().message();
  EXPECT_EQ(toDoubles(r->outputs[0])[0], 142);
  // acc * m = 0.5 with an odd zero point: round(0.5) + 11 = 11 (rounding after the zero point: 12).
  r = one({1}, {1}, 0.5, 11);
  ASSERT_TRUE(r.isOk()) << r.status().message();
  EXPECT_EQ(toDoubles(r->outputs[0])[0], 11);
}

TEST(QLinearConv, PerChannelWeightsBiasAndPaddingMatchTheDefinition) {
  std::mt19937_64 rng(3);
  const int64_t n = 2, c = 3, h = 6, w = 5, m = 4, kh = 3, kw = 2;
  const auto x = uniformInts(n * c * h * w, -128, 127, rng);
  const auto wt = uniformInts(m * c * kh * kw, 0, 255, rng);
  const auto zw = uniformInts(m, 120, 136, rng), bias = uniformInts(m, -3000, 3000, rng);
  const std::vector<double> sw{0.004, 0.006, 0.003, 0.008};
  const double sx = 0.02, zx = -7, sy = 0.09, zy = 130;
  // pads (top, left, bottom, right) = (1, 0, 1, 1), stride 1: output 6 x 5.
  auto r = runEngine(
      contribRegistry(), "ai.onnx::QLinearConv", {{"pads", std::vector<int64_t>{1, 0, 1, 1}}},
      {fromValues(DataType::kInt8, {n, c, h, w}, x), fromValues(DataType::kFloat32, {}, {sx}),
       fromValues(DataType::kInt8, {}, {zx}), fromValues(DataType::kUInt8, {m, c, kh, kw}, wt),
       fromValues(DataType::kFloat32, {m}, sw), fromValues(DataType::kUInt8, {m}, zw),
       fromValues(DataType::kFloat32, {}, {sy}), fromValues(DataType::kUInt8, {}, {zy}),
       fromValues(DataType::kInt32, {m}, bias)});
  ASSERT_TRUE(r.isOk()) << r.status().message();
  ASSERT_EQ(r->outputs[0].desc.dims, (std::vector<int64_t>{n, m, 6, 5}));
  const auto y = toDoubles(r->outputs[0]);
  for (int64_t b = 0; b < n; ++b)
    for (int64_t o = 0; o < m; ++o)
      for (int64_t i = 0; i < 6; ++i)
        for (int64_t j = 0; j < 5; ++j) {
          int64_t acc = static_cast<int64_t>(bias[o]);
          for (int64_t ci = 0; ci < c; ++ci)
            for (int64_t u = 0; u < kh; ++u)
              for (int64_t v = 0; v < kw; ++v) {
                const int64_t yy = i - 1 + u, xx = j + v;
                if (yy < 0 || yy >= h || xx < 0 || xx >= w) continue;
                acc += (static_cast<int64_t>(x[((b * c + ci) * h + yy) * w + xx]) -
                        static_cast<int64_t>(zx)) *
                       (static_cast<int64_t>(wt[((o * c + ci) * kh + u) * kw + v]) -
                        static_cast<int64_t>(zw[o]));
              }
          const float mm =
              mult(static_cast<float>(sx), static_cast<float>(sw[o]), static_cast<float>(sy));
          EXPECT_EQ(y[((b * m + o) * 6 + i) * 5 + j], requant(acc, mm, zy, false))
              << "batch " << b << " channel " << o << " at " << i << "," << j;
        }
}

TEST(ConvInteger, MatchesConvOfTheShiftedValues) {
  // ConvInteger(x, w, zx, zw) equals the FP64 Conv of (x - zx) and (w - zw), exactly.
  std::mt19937_64 rng(5);
  const auto x = uniformInts(1 * 4 * 7 * 7, 0, 255, rng),
             wt = uniformInts(6 * 2 * 3 * 3, -128, 127, rng);
  const auto zw = uniformInts(6, -4, 4, rng);
  const double zx = 128;
  const Attrs at{{"group", int64_t{2}},
                 {"strides", std::vector<int64_t>{2, 1}},
                 {"pads", std::vector<int64_t>{1, 1, 1, 1}}};
  auto r = runEngine(
      contribRegistry(), "ai.onnx::ConvInteger", at,
      {fromValues(DataType::kUInt8, {1, 4, 7, 7}, x), fromValues(DataType::kInt8, {6, 2, 3, 3}, wt),
       fromValues(DataType::kUInt8, {}, {zx}), fromValues(DataType::kInt8, {6}, zw)});
  ASSERT_TRUE(r.isOk()) << r.status().message();
  ASSERT_EQ(r->outputs[0].desc.dtype, DataType::kInt32);
  std::vector<double> xs(x.size()), ws(wt.size());
  for (size_t i = 0; i < x.size(); ++i) xs[i] = x[i] - zx;
  for (size_t i = 0; i < wt.size(); ++i) ws[i] = wt[i] - zw[i / 18];
  auto f = runEngine(contribRegistry(), "ai.onnx::Conv", at,
                     {fromValues(DataType::kFloat64, {1, 4, 7, 7}, xs),
                      fromValues(DataType::kFloat64, {6, 2, 3, 3}, ws)});
  ASSERT_TRUE(f.isOk()) << f.status().message();
  EXPECT_EQ(toDoubles(r->outputs[0]), toDoubles(f->outputs[0]));
}

TEST(MatMulInteger, BatchesBroadcastAndZeroPointsApplyPerRowAndColumn) {
  std::mt19937_64 rng(9);
  const auto a = uniformInts(2 * 3 * 4, -128, 127, rng), b = uniformInts(4 * 5, 0, 255, rng);
  const auto za = uniformInts(3, -9, 9, rng), zb = uniformInts(5, 100, 150, rng);
  auto r =
      runEngine(contribRegistry(), "ai.onnx::MatMulInteger", {},
                {fromValues(DataType::kInt8, {2, 3, 4}, a), fromValues(DataType::kUInt8, {4, 5}, b),
                 fromValues(DataType::kInt8, {3}, za), fromValues(DataType::kUInt8, {5}, zb)});
  ASSERT_TRUE(r.isOk()) << r.status().message();
  const auto y = toDoubles(r->outputs[0]);
  for (int64_t bt = 0; bt < 2; ++bt)
    for (int64_t i = 0; i < 3; ++i)
      for (int64_t j = 0; j < 5; ++j) {
        double acc = 0;
        for (int64_t t = 0; t < 4; ++t)
          acc += (a[(bt * 3 + i) * 4 + t] - za[i]) * (b[t * 5 + j] - zb[j]);
        EXPECT_EQ(y[(bt * 3 + i) * 5 + j], acc);
      }
}

TEST(QLinearOps, BadParametersAreNamedErrors) {
  const auto a = fromValues(DataType::kUInt8, {2, 3}, {1, 2, 3, 4, 5, 6});
  const auto b = fromValues(DataType::kInt8, {3, 2}, {1, 2, 3, 4, 5, 6});
  const auto s = fromValues(DataType::kFloat32, {}, {0.5});
  const auto zu = fromValues(DataType::kUInt8, {}, {3}), zi = fromValues(DataType::kInt8, {}, {0});
  // A zero point of another type than its operand.
  expectError(
      runEngine(contribRegistry(), "ai.onnx::QLinearMatMul", {}, {a, s, zi, b, s, zi, s, zu})
          .status(),
      {"a_zero_point", "INT8", "UINT8"});
  // A per-column scale of the wrong length.
  expectError(runEngine(contribRegistry(), "ai.onnx::QLinearMatMul", {},
                        {a, s, zu, b, fromValues(DataType::kFloat32, {3}, {1, 1, 1}), zi, s, zu})
                  .status(),
              {"b_scale", "per column"});
  // A zero y_scale: refused at run time, naming the multiplier.
  expectError(runEngine(contribRegistry(), "ai.onnx::QLinearMatMul", {},
                        {a, s, zu, b, s, zi, fromValues(DataType::kFloat32, {}, {0}), zu})
                  .status(),
              {"multiplier", "y_scale nonzero"});
  // QLinearConv's bias must be INT32.
  const auto x = fromValues(DataType::kUInt8, {1, 1, 3, 3}, {});
  const auto w = fromValues(DataType::kUInt8, {2, 1, 1, 1}, {1, 2});
  expectError(runEngine(contribRegistry(), "ai.onnx::QLinearConv", {},
                        {x, s, zu, w, s, zu, s, zu, fromValues(DataType::kFloat32, {2}, {1, 1})})
                  .status(),
              {"input 'B'", "INT32"});
  // MatMulInteger's operands are 8-bit.
  expectError(runEngine(contribRegistry(), "ai.onnx::MatMulInteger", {},
                        {fromValues(DataType::kInt32, {2, 3}, {}), b})
                  .status(),
              {"input 'A'", "INT32"});
}

// A loaded plan's kernels run without the shape rules: each checks its parameters' counts.
TEST(QLinearOps, KernelsCheckParameterCountsWhereNoShapeRuleRan) {
  auto reg = contribRegistry();
  auto run = [&](const char* key, std::vector<TensorValue> in, TensorValue out) {
    const RegisteredOp* op = reg->find(key);
    EXPECT_NE(op, nullptr) << key;
    auto attrs = op->validateAttrs("test", AttrMap{});
    EXPECT_TRUE(attrs.isOk()) << attrs.status().message();
    auto inst = op->instantiate("test", *attrs);
    EXPECT_TRUE(inst.isOk()) << inst.status().message();
    std::vector<Tensor> ts, os{Tensor{out.desc, out.data.data(), Device::kCpu}};
    for (auto& t : in) ts.push_back(Tensor{t.desc, t.data.data(), Device::kCpu});
    return (*inst)->run(0, ts, os, nullptr, 0, nullptr);
  };
  const auto s = fromValues(DataType::kFloat32, {}, {0.5});
  const auto z = fromValues(DataType::kUInt8, {}, {3});
  const auto none = fromValues(DataType::kUInt8, {0}, {});
  expectError(run("ai.onnx::QLinearMatMul",
                  {fromValues(DataType::kUInt8, {2, 3}, {}), s, none,
                   fromValues(DataType::kUInt8, {3, 2}, {}), s, z, s, z},
                  fromValues(DataType::kUInt8, {2, 2}, {})),
              {"zero point of 0"});
  expectError(run("ai.onnx::QLinearConv",
                  {fromValues(DataType::kUInt8, {1, 1, 3, 3}, {}), s, z,
                   fromValues(DataType::kUInt8, {2, 1, 1, 1}, {}), s, z, s, z,
                   fromValues(DataType::kInt32, {3}, {})},
                  fromValues(DataType::kUInt8, {1, 2, 3, 3}, {})),
              {"input 'B' has 3 elements"});
  expectError(run("ai.onnx::MatMulInteger",
                  {fromValues(DataType::kUInt8, {2, 3}, {}),
                   fromValues(DataType::kUInt8, {3, 2}, {}), fromValues(DataType::kUInt8, {5}, {})},
                  fromValues(DataType::kInt32, {2, 2}, {})),
              {"a_zero_point", "5 elements"});
}
