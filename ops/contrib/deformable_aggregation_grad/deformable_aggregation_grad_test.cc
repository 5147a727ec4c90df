// opforge::DeformableAggregationGrad: float64 gradients of the features, locations and weights
// against central finite differences of opforge::DeformableAggregation; lower precisions against
// float64; masked points; the engine path and the run-time table check.
#include <gtest/gtest.h>

#include <cmath>

#include "op_harness.h"
#include "ops/contrib/common/grad_check.h"
#include "ops/contrib/deformable_aggregation/da_problem.h"

using namespace opforge;
using namespace opforge::test;

namespace {
const char* kFwd = "opforge::DeformableAggregation";
const char* kBwd = "opforge::DeformableAggregationGrad";

DaProblem smallProblem(DataType t) {
  DaProblem p;
  p.B = 2;
  p.A = 2;
  p.P = 2;
  p.Ncam = 2;
  p.C = 4;
  p.G = 2;
  p.levels = {{3, 4}, {2, 2}};
  p.feat_type = t;
  p.loc_type = t == DataType::kFloat64 ? DataType::kFloat64 : DataType::kFloat32;
  p.valid = 0.75;
  return p;
}
}  // namespace

TEST(DeformableAggregationGrad, MatchesFiniteDifferencesInFloat64) {
  std::mt19937_64 rng(31);
  for (int trial = 0; trial < 3; ++trial) {
    DaProblem p = smallProblem(DataType::kFloat64);
    auto in = makeDaInputs(p, rng);
    TensorValue gout = randomTensor(DataType::kFloat64, {p.B, p.A, p.C}, rng, -1, 1);
    auto all = in;
    all.push_back(gout);
    auto g = runKernel(*contribRegistry(), kBwd, {}, all, 0xff);
    ASSERT_TRUE(g.isOk()) << g.status().message();
    auto forward = [&](const std::vector<TensorValue>& x) {
      auto r = runKernel(*contribRegistry(), kFwd, {}, x, 0xff);
      EXPECT_TRUE(r.isOk()) << r.status().message();
      return r.isOk() ? r->outputs[0] : gout;
    };
    // Features and weights enter linearly; locations piecewise bilinearly (kinks at cell edges are
    // skipped).
    const struct {
      size_t input, output;
      double tol;
      double kink;
    } checks[] = {{0, 0, 1e-7, INFINITY}, {4, 2, 1e-7, INFINITY}, {3, 1, 1e-6, 1e-4}};
    for (const auto& c : checks) {
      const auto fd = fdGradient(forward, in, c.input, gout, 1e-6, c.kink);
      const auto got = toDoubles(g->outputs[c.output]);
      ASSERT_EQ(fd.size(), got.size());
      int compared = 0;
      for (size_t i = 0; i < fd.size(); ++i) {
        if (std::isnan(fd[i])) continue;
        ++compared;
        EXPECT_NEAR(got[i], fd[i], c.tol * (1 + std::fabs(fd[i])))
            << "input " << c.input << " element " << i;
      }
      EXPECT_GT(compared, static_cast<int>(fd.size()) * 3 / 4)
          << "too many kinks skipped for input " << c.input;
    }
  }
}

TEST(DeformableAggregationGrad, MaskedPointsGetNoGradient) {
  DaProblem p = smallProblem(DataType::kFloat32);
  p.valid = 0.0;  // every point outside (0, 1)^2, NaN and Inf included
  std::mt19937_64 rng(32);
  auto in = makeDaInputs(p, rng);
  in.push_back(randomTensor(DataType::kFloat32, {p.B, p.A, p.C}, rng, -1, 1));
  auto g = runKernel(*contribRegistry(), kBwd, {}, in, 0xff);
  ASSERT_TRUE(g.isOk()) << g.status().message();
  for (int o = 0; o < 3; ++o)
    for (double v : toDoubles(g->outputs[o])) ASSERT_EQ(v, 0.0) << "output " << o;
}

TEST(DeformableAggregationGrad, EveryTypeAgainstFloat64AndTheEngine) {
  std::mt19937_64 rng(33);
  for (DataType t : {DataType::kFloat32, DataType::kFloat16, DataType::kBFloat16}) {
    DaProblem p = smallProblem(t);
    auto in = makeDaInputs(p, rng);
    in.push_back(randomTensor(t, {p.B, p.A, p.C}, rng, -1, 1));
    checkOp(contribRegistry(), kBwd, {}, in);
    auto g = runKernel(*contribRegistry(), kBwd, {}, in, 0xff);
    ASSERT_TRUE(g.isOk()) << g.status().message();
    // The same values in float64.
    std::vector<TensorValue> in64;
    for (const auto& x : in) {
      if (!isFloatType(x.desc.dtype)) {
        in64.push_back(x);
        continue;
      }
      TensorValue y = daTensor(DataType::kFloat64, x.desc.dims);
      for (int64_t i = 0; i < x.desc.numel(); ++i)
        storeFromDouble(y.data.data(), DataType::kFloat64, i,
                        loadAsDouble(x.data.data(), x.desc.dtype, i));
      in64.push_back(y);
    }
    auto g64 = runKernel(*contribRegistry(), kBwd, {}, in64, 0xff);
    ASSERT_TRUE(g64.isOk()) << g64.status().message();
    for (int o = 0; o < 3; ++o) {
      TensorValue want = g->outputs[o];
      for (int64_t i = 0; i < want.desc.numel(); ++i)
        storeFromDouble(want.data.data(), want.desc.dtype, i,
                        loadAsDouble(g64->outputs[o].data.data(), DataType::kFloat64, i));
      EXPECT_TRUE(allClose(g->outputs[o], want)) << dtypeName(t) << " output " << o;
    }
  }
}

TEST(DeformableAggregationGrad, ShapeErrorsAndRunTimeTableCheck) {
  DaProblem p = smallProblem(DataType::kFloat32);
  std::mt19937_64 rng(34);
  auto in = makeDaInputs(p, rng);
  in.push_back(randomTensor(DataType::kFloat32, {p.B, p.A + 1, p.C}, rng, -1, 1));
  auto r = runKernel(*contribRegistry(), kBwd, {}, in, 0xff);
  ASSERT_FALSE(r.isOk());
  EXPECT_NE(r.status().message().find("grad_output"), std::string::npos) << r.status().message();
  in.back() = randomTensor(DataType::kFloat32, {p.B, p.A, p.C}, rng, -1, 1);
  reinterpret_cast<int32_t*>(in[2].data.data())[1] = static_cast<int32_t>(p.F());
  auto e = runEngine(contribRegistry(), kBwd, {}, in);
  ASSERT_FALSE(e.isOk());
  EXPECT_NE(e.status().message().find("scale_start_index[0][1] = " + std::to_string(p.F())),
            std::string::npos)
      << e.status().message();
}
