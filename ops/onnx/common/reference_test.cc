// A sweep over the built-in ONNX ops with random inputs through op_harness::checkOp: the CPU
// reference run twice with different output poison must agree bit for bit (every element
// written, deterministic), and the whole engine path must agree with the reference. Values are
// checked against the ONNX node tests (tools/onnx_tests) and hand-computed cases elsewhere; a few
// identities are checked here.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>

#include "channels_last.h"
#include "op_harness.h"

using namespace opforge;
using namespace opforge::test;

namespace {
std::mt19937_64& rng() {
  static std::mt19937_64 r(1234);
  return r;
}
TensorValue rnd(DataType t, std::vector<int64_t> d, double lo = -2, double hi = 2) {
  return randomTensor(t, d, rng(), lo, hi);
}
}  // namespace

TEST(OnnxReference, UnaryOps) {
  for (const char* op :
       {"Abs",   "Neg",       "Exp",      "Sqrt",  "Reciprocal",  "Sigmoid",   "Tanh",
        "Relu",  "LeakyRelu", "Elu",      "Selu",  "Erf",         "Sin",       "Cos",
        "Floor", "Ceil",      "Round",    "Sign",  "HardSigmoid", "HardSwish", "Softplus",
        "Mish",  "Gelu",      "Identity", "IsNaN", "IsInf"})
    for (DataType t : {DataType::kFloat32, DataType::kFloat16, DataType::kFloat64}) {
      const bool positive = std::string(op) == "Sqrt" || std::string(op) == "Log";
      checkOp(contribRegistry(), std::string("ai.onnx::") + op, {},
              {rnd(t, {3, 7}, positive ? 0.1 : -3, 3)});
    }
  checkOp(contribRegistry(), "ai.onnx::Log", {}, {rnd(DataType::kFloat32, {5}, 0.1, 4)});
  for (const char* op : {"Acos", "Asin", "Atan", "Asinh", "Atanh", "Cosh", "Sinh", "Tan",
                         "Softsign", "ThresholdedRelu", "Celu", "Shrink", "Swish", "Dropout"})
    checkOp(contribRegistry(), std::string("ai.onnx::") + op, {},
            {rnd(DataType::kFloat32, {4, 5}, -0.9, 0.9)});
  checkOp(contribRegistry(), "ai.onnx::Acosh", {}, {rnd(DataType::kFloat32, {6}, 1.1, 4)});
  checkOp(contribRegistry(), "ai.onnx::BitwiseNot", {}, {rnd(DataType::kInt16, {7}, -300, 300)});
  checkOp(contribRegistry(), "ai.onnx::BitwiseXor", {},
          {rnd(DataType::kUInt8, {3, 4}, 0, 255), rnd(DataType::kUInt8, {4}, 0, 255)});
  checkOp(contribRegistry(), "ai.onnx::BitShift", {{"direction", std::string("LEFT")}},
          {rnd(DataType::kUInt32, {5}, 0, 1000), rnd(DataType::kUInt32, {5}, 0, 40)});
  checkOp(contribRegistry(), "ai.onnx::Not", {}, {rnd(DataType::kBool, {4, 4})});
  checkOp(contribRegistry(), "ai.onnx::Abs", {}, {rnd(DataType::kInt8, {9}, -100, 100)});
  checkOp(contribRegistry(), "ai.onnx::Gelu", {{"approximate", std::string("tanh")}},
          {rnd(DataType::kFloat32, {16})});
  checkOp(contribRegistry(), "ai.onnx::Clip", {},
          {rnd(DataType::kFloat32, {10}), fromFloats({}, {-0.5f}), fromFloats({}, {0.5f})});
  checkOp(contribRegistry(), "ai.onnx::Cast", {{"to", int64_t{6}}},
          {rnd(DataType::kFloat32, {8}, -100, 100)});
  checkOp(contribRegistry(), "ai.onnx::Cast", {{"to", int64_t{10}}},
          {rnd(DataType::kInt64, {8}, -100, 100)});
}

TEST(OnnxReference, BroadcastingBinaryOps) {
  const std::vector<std::pair<std::vector<int64_t>, std::vector<int64_t>>> shapes = {
      {{2, 3, 4}, {2, 3, 4}}, {{2, 3, 4}, {4}}, {{2, 1, 4}, {3, 1}}, {{}, {5}}, {{1}, {2, 1}}};
  for (const auto& [sa, sb] : shapes) {
    for (const char* op : {"Add", "Sub", "Mul", "Div", "Pow", "Max", "Min", "Sum", "Mean", "Equal",
                           "Less", "LessOrEqual", "Greater", "GreaterOrEqual", "PRelu"})
      checkOp(contribRegistry(), std::string("ai.onnx::") + op, {},
              {rnd(DataType::kFloat32, sa, 0.5, 3), rnd(DataType::kFloat32, sb, 0.5, 3)});
    for (const char* op : {"And", "Or", "Xor"})
      checkOp(contribRegistry(), std::string("ai.onnx::") + op, {},
              {rnd(DataType::kBool, sa), rnd(DataType::kBool, sb)});
    checkOp(contribRegistry(), "ai.onnx::Mod", {},
            {rnd(DataType::kInt32, sa, -20, 20), rnd(DataType::kInt32, sb, 1, 7)});
    checkOp(contribRegistry(), "ai.onnx::Where", {},
            {rnd(DataType::kBool, sa), rnd(DataType::kFloat32, sb), rnd(DataType::kFloat32, sa)});
  }
  // Python's sign rule for integer Mod, C's for fmod.
  TensorValue a, b;
  a.desc = b.desc = TensorDesc{DataType::kInt32, {4}};
  std::vector<int32_t> va{7, -7, 7, -7}, vb{3, 3, -3, -3};
  a.data.assign(reinterpret_cast<uint8_t*>(va.data()), reinterpret_cast<uint8_t*>(va.data()) + 16);
  b.data.assign(reinterpret_cast<uint8_t*>(vb.data()), reinterpret_cast<uint8_t*>(vb.data()) + 16);
  auto m = runKernel(*contribRegistry(), "ai.onnx::Mod", {}, {a, b}, 0xff);
  EXPECT_EQ(toDoubles(m->outputs[0]), (std::vector<double>{1, 2, -2, -1}));
  auto f = runKernel(*contribRegistry(), "ai.onnx::Mod", {{"fmod", int64_t{1}}}, {a, b}, 0xff);
  EXPECT_EQ(toDoubles(f->outputs[0]), (std::vector<double>{1, -1, 1, -1}));
}

TEST(OnnxReference, ReductionsAndNormalizations) {
  auto x = rnd(DataType::kFloat32, {3, 4, 5});
  for (const char* op : {"ReduceSum", "ReduceMean", "ReduceMax", "ReduceMin", "ReduceProd",
                         "ReduceL1", "ReduceL2", "ReduceSumSquare", "ReduceLogSumExp"})
    for (const auto& axes : {std::vector<int64_t>{1}, {0, 2}, {-1}})
      for (int64_t keep : {0, 1})
        checkOp(contribRegistry(), std::string("ai.onnx::") + op,
                {{"axes", axes}, {"keepdims", keep}}, {x});
  checkOp(contribRegistry(), "ai.onnx::ReduceSum", {}, {x});  // all axes
  for (const char* op : {"ArgMax", "ArgMin"})
    checkOp(contribRegistry(), std::string("ai.onnx::") + op, {{"axis", int64_t{1}}}, {x});
  for (const char* op : {"Softmax", "LogSoftmax", "Hardmax"})
    for (int64_t axis : {0, 1, -1})
      checkOp(contribRegistry(), std::string("ai.onnx::") + op, {{"axis", axis}}, {x});
  checkOp(contribRegistry(), "ai.onnx::LayerNormalization", {{"axis", int64_t{-2}}},
          {x, rnd(DataType::kFloat32, {4, 5}), rnd(DataType::kFloat32, {5})});
  auto img = rnd(DataType::kFloat32, {2, 4, 3, 3});
  auto c4 = [] { return rnd(DataType::kFloat32, {4}, 0.5, 1.5); };
  checkOp(contribRegistry(), "ai.onnx::BatchNormalization", {}, {img, c4(), c4(), c4(), c4()});
  checkOp(contribRegistry(), "ai.onnx::InstanceNormalization", {}, {img, c4(), c4()});
  checkOp(contribRegistry(), "ai.onnx::GroupNormalization", {{"num_groups", int64_t{2}}},
          {img, c4(), c4()});
  TensorValue axis;
  axis.desc = TensorDesc{DataType::kInt32, {}};
  axis.data = {1, 0, 0, 0};
  checkOp(contribRegistry(), "ai.onnx::CumSum", {{"reverse", int64_t{1}}}, {x, axis});
  checkOp(contribRegistry(), "ai.onnx::CumProd", {{"exclusive", int64_t{1}}}, {x, axis});
  checkOp(contribRegistry(), "ai.onnx::RMSNormalization", {{"axis", int64_t{1}}},
          {x, rnd(DataType::kFloat32, {4, 5})});
  // Softmax rows sum to 1.
  auto s = runKernel(*contribRegistry(), "ai.onnx::Softmax", {}, {x}, 0xff);
  auto v = toDoubles(s->outputs[0]);
  for (size_t r = 0; r < v.size() / 5; ++r) {
    double sum = 0;
    for (int j = 0; j < 5; ++j) sum += v[r * 5 + j];
    EXPECT_NEAR(sum, 1.0, 1e-6);
  }
}

TEST(OnnxReference, PoolingAndConvTranspose) {
  auto img = rnd(DataType::kFloat32, {2, 3, 7, 6});
  for (const char* op : {"MaxPool", "AveragePool"})
    for (int64_t ceil : {0, 1})
      checkOp(contribRegistry(), std::string("ai.onnx::") + op,
              {{"kernel_shape", std::vector<int64_t>{3, 2}},
               {"strides", std::vector<int64_t>{2, 2}},
               {"pads", std::vector<int64_t>{1, 0, 1, 1}},
               {"ceil_mode", ceil}},
              {img});
  checkOp(contribRegistry(), "ai.onnx::GlobalAveragePool", {}, {img});
  checkOp(contribRegistry(), "ai.onnx::GlobalMaxPool", {}, {img});
  checkOp(contribRegistry(), "ai.onnx::ConvTranspose",
          {{"strides", std::vector<int64_t>{2, 2}}, {"group", int64_t{3}}},
          {img, rnd(DataType::kFloat32, {3, 2, 3, 3}), rnd(DataType::kFloat32, {6})});
}

TEST(OnnxReference, DataMovement) {
  auto x = rnd(DataType::kFloat32, {2, 3, 4});
  checkOp(contribRegistry(), "ai.onnx::Transpose", {{"perm", std::vector<int64_t>{2, 0, 1}}}, {x});
  checkOp(contribRegistry(), "ai.onnx::Concat", {{"axis", int64_t{1}}},
          {x, rnd(DataType::kFloat32, {2, 5, 4})});
  checkOp(contribRegistry(), "ai.onnx::Split",
          {{"axis", int64_t{2}}, {"split", std::vector<int64_t>{1, 3}}}, {x});
  checkOp(contribRegistry(), "ai.onnx::Slice",
          {{"starts", std::vector<int64_t>{3, 0}},
           {"ends", std::vector<int64_t>{0, 2}},
           {"axes", std::vector<int64_t>{2, 0}}},
          {x});
  checkOp(contribRegistry(), "ai.onnx::Flatten", {{"axis", int64_t{2}}}, {x});
  checkOp(contribRegistry(), "ai.onnx::Unsqueeze", {{"axes", std::vector<int64_t>{0, 3}}}, {x});
  checkOp(contribRegistry(), "ai.onnx::Squeeze", {{"axes", std::vector<int64_t>{1}}},
          {rnd(DataType::kFloat32, {2, 1, 3})});
  checkOp(contribRegistry(), "ai.onnx::Pad",
          {{"pads", std::vector<int64_t>{1, 0, 2, 0, 2, 1}}, {"mode", std::string("reflect")}},
          {x});
  checkOp(contribRegistry(), "ai.onnx::TopK", {{"k", int64_t{2}}, {"axis", int64_t{1}}}, {x});
  checkOp(contribRegistry(), "ai.onnx::DepthToSpace",
          {{"blocksize", int64_t{2}}, {"mode", std::string("CRD")}},
          {rnd(DataType::kFloat32, {1, 8, 2, 3})});
  checkOp(contribRegistry(), "ai.onnx::SpaceToDepth", {{"blocksize", int64_t{2}}},
          {rnd(DataType::kFloat32, {1, 2, 4, 6})});
  checkOp(contribRegistry(), "ai.onnx::Trilu", {{"upper", int64_t{0}}}, {x});
  checkOp(contribRegistry(), "ai.onnx::EyeLike", {{"k", int64_t{-1}}},
          {rnd(DataType::kFloat32, {3, 4})});
  checkOp(contribRegistry(), "ai.onnx::Einsum", {{"equation", std::string("bij,bjk->bik")}},
          {x, rnd(DataType::kFloat32, {2, 4, 5})});
  checkOp(
      contribRegistry(), "ai.onnx::GridSample", {{"align_corners", int64_t{1}}},
      {rnd(DataType::kFloat32, {1, 2, 4, 5}), rnd(DataType::kFloat32, {1, 3, 3, 2}, -1.2, 1.2)});
  auto nz = rnd(DataType::kFloat32, {3, 4}, -1, 1);
  for (int64_t i = 0; i < nz.desc.numel(); i += 3)
    storeFromDouble(nz.data.data(), nz.desc.dtype, i, 0.0);
  checkOp(contribRegistry(), "ai.onnx::NonZero", {}, {nz});
  auto r = runKernel(*contribRegistry(), "ai.onnx::NonZero", {}, {nz}, 0xff);
  ASSERT_TRUE(r.isOk());
  EXPECT_EQ(r->outputs[0].desc.dims, (std::vector<int64_t>{2, 8}));  // 12 elements, 4 zeros
}

// Integer Add, Sub, Mul, ReduceSum, ReduceProd, ReduceSumSquare and CumSum wrap as numpy and ONNX
// Runtime do (two's complement). The references compute them in unsigned arithmetic
// (common/wrap.h): signed overflow is undefined in C++, which the ASan + UBSan job
// (scripts/sanitize.sh) reports; this test pins the values.
TEST(OnnxReference, IntegerArithmeticWrapsLikeNumpy) {
  constexpr int64_t kMax = std::numeric_limits<int64_t>::max(),
                    kMin = std::numeric_limits<int64_t>::min();
  auto wrap = [](uint64_t u) { return static_cast<int64_t>(u); };
  auto ints = [](const TensorValue& t) {
    std::vector<int64_t> v(static_cast<size_t>(t.desc.numel()));
    std::memcpy(v.data(), t.data.data(), v.size() * sizeof(int64_t));
    return v;
  };
  auto run = [&](const std::string& op, const Attrs& attrs, std::vector<TensorValue> in) {
    auto r = runKernel(*contribRegistry(), "ai.onnx::" + op, attrs, in, 0xff);
    EXPECT_TRUE(r.isOk()) << op << ": " << r.status().message();
    return r ? ints(r->outputs[0]) : std::vector<int64_t>{};
  };
  const auto a = fromInt64s({3}, {kMax, kMin, -3}), b = fromInt64s({3}, {2, -1, kMax});
  EXPECT_EQ(run("Add", {}, {a, b}),
            (std::vector<int64_t>{wrap(uint64_t(kMax) + 2), kMax, kMax - 3}));
  EXPECT_EQ(run("Sub", {}, {a, b}),
            (std::vector<int64_t>{kMax - 2, wrap(uint64_t(kMin) + 1), wrap(uint64_t(-3) - kMax)}));
  EXPECT_EQ(run("Mul", {}, {a, b}),
            (std::vector<int64_t>{-2, kMin, wrap(uint64_t(-3) * uint64_t(kMax))}));
  const auto big = fromInt64s({2}, {kMax, kMax});
  const Attrs keep{{"keepdims", int64_t{0}}};
  EXPECT_EQ(run("ReduceSum", keep, {big}), (std::vector<int64_t>{-2}));
  EXPECT_EQ(run("ReduceProd", keep, {big}), (std::vector<int64_t>{1}));
  EXPECT_EQ(run("ReduceSumSquare", keep, {big}), (std::vector<int64_t>{2}));
  EXPECT_EQ(run("CumSum", {}, {big, fromInt64s({}, {0})}), (std::vector<int64_t>{kMax, -2}));
}

namespace {
// `t` stored in format f, or (back) from f to LINEAR.
TensorValue toFormat(const TensorValue& t, Format f, bool back = false) {
  TensorValue r = t;
  r.desc.format = back ? Format::kLinear : f;
  if (f == Format::kHWC) r.data = channelsLastBytes(t, !back);
  return r;
}
}  // namespace

// The references of ops with a channels-last combination read and write the bytes as the formats
// lay them out: the broadcasting binary ops (a squeeze-excitation scale [N, C, 1, 1], a rank-3
// operand, mixed formats), the unary maps and the global pools give, channels-last, the LINEAR
// answer bit for bit.
TEST(OnnxReference, ChannelsLastReferencesMatchLinear) {
  const Format L = Format::kLinear, H = Format::kHWC;
  struct Run {
    const char* op;
    std::vector<std::vector<int64_t>> in;
    std::vector<Format> in_f;
    Format out_f;
  };
  const std::vector<Run> runs = {
      {"Mul", {{2, 5, 3, 4}, {2, 5, 1, 1}}, {H, H}, H},
      {"Mul", {{2, 5, 3, 4}, {2, 5, 1, 1}}, {H, L}, H},
      {"Add", {{2, 5, 3, 4}, {5, 1, 4}}, {H, H}, H},
      {"Sub", {{2, 5, 3, 4}, {2, 5, 3, 4}}, {L, H}, H},
      {"Div", {{2, 5, 3, 4}, {4}}, {H, L}, L},
      {"Sigmoid", {{2, 5, 3, 4}}, {H}, H},
      {"GlobalAveragePool", {{2, 5, 3, 4}}, {H}, H},
      {"GlobalMaxPool", {{3, 6, 7}}, {H}, L},
  };
  for (const Run& r : runs)
    for (DataType t : {DataType::kFloat32, DataType::kFloat16}) {
      std::vector<TensorValue> lin, fmt;
      for (size_t i = 0; i < r.in.size(); ++i) {
        lin.push_back(rnd(t, r.in[i], 0.5, 2));
        fmt.push_back(toFormat(lin.back(), r.in_f[i]));
      }
      const std::string key = std::string("ai.onnx::") + r.op;
      auto want = runKernel(*contribRegistry(), key, {}, lin, 0xff);
      auto got = runKernel(*contribRegistry(), key, {}, fmt, 0xff, 0, {r.out_f});
      ASSERT_TRUE(want.isOk()) << r.op << ": " << want.status().message();
      ASSERT_TRUE(got.isOk()) << r.op << ": " << got.status().message();
      const TensorValue y = toFormat(got->outputs[0], r.out_f, /*back=*/true);
      EXPECT_EQ(y.data, want->outputs[0].data) << r.op << " " << dtypeName(t);
    }
}
