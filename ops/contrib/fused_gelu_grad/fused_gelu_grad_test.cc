// opforge::FusedGeluGrad: float64 gradients against central finite differences of
// opforge::FusedGelu, lower precisions against float64, the engine path.
#include <gtest/gtest.h>

#include "op_harness.h"
#include "ops/contrib/common/grad_check.h"

using namespace opforge;
using namespace opforge::test;

namespace {
struct Case {
  const char* approx;
  std::vector<int32_t> chain;
  std::vector<float> scalars;
};
const std::vector<Case> kCases = {
    {"none", {}, {}},
    {"tanh", {}, {}},
    {"none", {1}, {}},  // the seed's GELU(GELU(x))
    {"tanh", {2, 3, 6, 7, 4, 1, 5, 8}, {0, 0, -1.5f, 0.25f, 0, 0, 0, 3.0f}},
};
Attrs attrsOf(const Case& c) {
  return {{"approximate", std::string(c.approx)}, {"chain", c.chain}, {"chain_scalars", c.scalars}};
}
}  // namespace

TEST(FusedGeluGrad, MatchesFiniteDifferencesInFloat64) {
  std::mt19937_64 rng(21);
  for (const Case& c : kCases) {
    const Attrs a = attrsOf(c);
    TensorValue x = randomTensor(DataType::kFloat64, {3, 7}, rng, -3, 3);
    TensorValue dy = randomTensor(DataType::kFloat64, {3, 7}, rng, -1, 1);
    auto g = runKernel(*contribRegistry(), "opforge::FusedGeluGrad", a, {x, dy}, 0xff);
    ASSERT_TRUE(g.isOk()) << g.status().message();
    auto forward = [&](const std::vector<TensorValue>& in) {
      auto r = runKernel(*contribRegistry(), "opforge::FusedGelu", a, in, 0xff);
      EXPECT_TRUE(r.isOk()) << r.status().message();
      return r.isOk() ? r->outputs[0] : in[0];
    };
    const auto fd = fdGradient(forward, {x}, 0, dy, 1e-6);
    const auto got = toDoubles(g->outputs[0]);
    for (size_t i = 0; i < fd.size(); ++i)
      EXPECT_NEAR(got[i], fd[i], 1e-7 * (1 + std::fabs(fd[i])))
          << c.approx << " chain size " << c.chain.size() << " element " << i;
  }
}

TEST(FusedGeluGrad, EveryTypeMatchesFloat64AndTheEngine) {
  std::mt19937_64 rng(22);
  for (const Case& c : kCases) {
    const Attrs a = attrsOf(c);
    TensorValue x64 = randomTensor(DataType::kFloat64, {5, 9}, rng, -3, 3);
    TensorValue dy64 = randomTensor(DataType::kFloat64, {5, 9}, rng, -1, 1);
    for (DataType t : {DataType::kFloat32, DataType::kFloat16, DataType::kBFloat16}) {
      // The same values in type t, so that the float64 gradient of those values is the target.
      TensorValue x{TensorDesc{t, x64.desc.dims},
                    std::vector<uint8_t>(x64.desc.numel() * dtypeSize(t))};
      TensorValue dy = x;
      for (int64_t i = 0; i < x64.desc.numel(); ++i) {
        storeFromDouble(x.data.data(), t, i, loadAsDouble(x64.data.data(), DataType::kFloat64, i));
        storeFromDouble(dy.data.data(), t, i,
                        loadAsDouble(dy64.data.data(), DataType::kFloat64, i));
      }
      TensorValue xr = x64, dyr = dy64;
      for (int64_t i = 0; i < x64.desc.numel(); ++i) {
        storeFromDouble(xr.data.data(), DataType::kFloat64, i, loadAsDouble(x.data.data(), t, i));
        storeFromDouble(dyr.data.data(), DataType::kFloat64, i, loadAsDouble(dy.data.data(), t, i));
      }
      auto want64 = runKernel(*contribRegistry(), "opforge::FusedGeluGrad", a, {xr, dyr}, 0xff);
      auto got = runKernel(*contribRegistry(), "opforge::FusedGeluGrad", a, {x, dy}, 0xff);
      ASSERT_TRUE(want64.isOk() && got.isOk());
      TensorValue want = got->outputs[0];
      for (int64_t i = 0; i < x64.desc.numel(); ++i)
        storeFromDouble(want.data.data(), t, i,
                        loadAsDouble(want64->outputs[0].data.data(), DataType::kFloat64, i));
      EXPECT_TRUE(allClose(got->outputs[0], want)) << dtypeName(t);
      checkOp(contribRegistry(), "opforge::FusedGeluGrad", a, {x, dy});
    }
  }
}

TEST(FusedGeluGrad, ShapeAndTypeErrors) {
  TensorValue x = fromFloats({2, 3}, {1, 2, 3, 4, 5, 6});
  TensorValue dy = fromFloats({3, 2}, {1, 2, 3, 4, 5, 6});
  auto r = runKernel(*contribRegistry(), "opforge::FusedGeluGrad", {}, {x, dy}, 0xff);
  ASSERT_FALSE(r.isOk());
  EXPECT_NE(r.status().message().find("same shape"), std::string::npos) << r.status().message();
}
