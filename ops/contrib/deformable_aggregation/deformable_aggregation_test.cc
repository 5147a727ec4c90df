// opforge::DeformableAggregation: the public conformance probe, the reference against an
// independent grid_sample formulation, the engine path, aliases, and every build- and run-time
// error.
#include <gtest/gtest.h>

#include <cmath>

#include "da_problem.h"
#include "op_harness.h"

using namespace opforge;
using namespace opforge::test;

namespace {
const char* kOp = "opforge::DeformableAggregation";

// grid_sample(mode=bilinear, padding_mode=zeros, align_corners=False) of one level of one camera at
// grid = 2 * loc - 1, channel k, written from the grid_sample definition: pixel coordinate
// ((g + 1) * size - 1) / 2, taps at floor and floor + 1, zero outside.
double gridSample(const TensorValue& feat, int64_t b, int64_t start, int64_t H, int64_t W,
                  double gx, double gy, int64_t k) {
  const int64_t F = feat.desc.dims[1], C = feat.desc.dims[2];
  const double ix = ((gx + 1) * W - 1) / 2, iy = ((gy + 1) * H - 1) / 2;
  const double ixf = std::floor(ix), iyf = std::floor(iy);
  double r = 0;
  for (int dy = 0; dy < 2; ++dy)
    for (int dx = 0; dx < 2; ++dx) {
      const int64_t xx = static_cast<int64_t>(ixf) + dx, yy = static_cast<int64_t>(iyf) + dy;
      if (xx < 0 || yy < 0 || xx >= W || yy >= H) continue;
      const double wgt = (dx ? ix - ixf : 1 - (ix - ixf)) * (dy ? iy - iyf : 1 - (iy - iyf));
      r += wgt *
           loadAsDouble(feat.data.data(), feat.desc.dtype, (b * F + start + yy * W + xx) * C + k);
    }
  return r;
}

TensorValue independent(const DaProblem& p, const std::vector<TensorValue>& in) {
  const int64_t L = p.L(), cpg = p.C / p.G;
  TensorValue out = daTensor(p.feat_type, {p.B, p.A, p.C});
  const auto* hw = reinterpret_cast<const int32_t*>(in[1].data.data());
  const auto* st = reinterpret_cast<const int32_t*>(in[2].data.data());
  for (int64_t b = 0; b < p.B; ++b)
    for (int64_t a = 0; a < p.A; ++a)
      for (int64_t k = 0; k < p.C; ++k) {
        double sum = 0;
        for (int64_t pt = 0; pt < p.P; ++pt)
          for (int64_t c = 0; c < p.Ncam; ++c) {
            const int64_t li = (((b * p.A + a) * p.P + pt) * p.Ncam + c) * 2;
            const double u = loadAsDouble(in[3].data.data(), p.loc_type, li);
            const double v = loadAsDouble(in[3].data.data(), p.loc_type, li + 1);
            const bool valid = u > 0 && u < 1 && v > 0 && v < 1;
            if (!valid) continue;
            for (int64_t l = 0; l < L; ++l) {
              const double wt =
                  loadAsDouble(in[4].data.data(), p.loc_type,
                               ((((b * p.A + a) * p.P + pt) * p.Ncam + c) * L + l) * p.G + k / cpg);
              sum += wt * gridSample(in[0], b, st[c * L + l], hw[2 * (c * L + l)],
                                     hw[2 * (c * L + l) + 1], 2 * u - 1, 2 * v - 1, k);
            }
          }
        storeFromDouble(out.data.data(), p.feat_type, (b * p.A + a) * p.C + k, sum);
      }
  return out;
}

void setAll(TensorValue& t, double v) {
  for (int64_t i = 0; i < t.desc.numel(); ++i) storeFromDouble(t.data.data(), t.desc.dtype, i, v);
}
}  // namespace

TEST(DeformableAggregation, PublicConformanceProbe312) {
  // Features all 1, every level 1x1, weights all 1, P = 13, Ncam = 6, L = 4, G = 8: an anchor whose
  // points are all at (0.5, 0.5) gives exactly 13 * 6 * 4 = 312 in every channel; points all at 0,
  // 1, -0.1, 1.1, NaN, +Inf or -Inf give 0.
  const std::vector<double> where = {0.5, 0.0, 1.0, -0.1, 1.1, NAN, INFINITY, -INFINITY};
  for (DataType t : {DataType::kFloat32, DataType::kFloat16, DataType::kBFloat16}) {
    DaProblem p;
    p.A = static_cast<int64_t>(where.size());
    p.P = 13;
    p.Ncam = 6;
    p.G = 8;
    p.C = 32;
    p.levels = {{1, 1}, {1, 1}, {1, 1}, {1, 1}};
    p.feat_type = t;
    std::mt19937_64 rng(1);
    auto in = makeDaInputs(p, rng);
    setAll(in[0], 1.0);
    setAll(in[4], 1.0);
    auto* loc = in[3].data.data();
    for (int64_t a = 0; a < p.A; ++a)
      for (int64_t i = 0; i < p.P * p.Ncam * 2; ++i)
        storeFromDouble(loc, DataType::kFloat32, a * p.P * p.Ncam * 2 + i, where[a]);
    checkOp(contribRegistry(), kOp, {}, in);
    auto r = runKernel(*contribRegistry(), kOp, {}, in, 0xff);
    ASSERT_TRUE(r.isOk()) << r.status().message();
    const auto y = toDoubles(r->outputs[0]);
    for (int64_t a = 0; a < p.A; ++a)
      for (int64_t k = 0; k < p.C; ++k)
        ASSERT_EQ(y[a * p.C + k], a == 0 ? 312.0 : 0.0) << "anchor " << a << " " << dtypeName(t);
  }
}

TEST(DeformableAggregation, MatchesGridSampleFormulation) {
  std::mt19937_64 rng(17);
  for (int trial = 0; trial < 12; ++trial) {
    DaProblem p;
    p.B = 1 + trial % 2;
    p.A = 3 + trial % 3;
    p.P = 1 + trial % 4;
    p.Ncam = 1 + trial % 3;
    p.G = std::vector<int64_t>{1, 2, 4}[trial % 3];
    p.C = p.G * (1 + trial % 5);
    p.levels = trial % 2 ? std::vector<std::pair<int32_t, int32_t>>{{5, 7}, {3, 4}, {1, 2}}
                         : std::vector<std::pair<int32_t, int32_t>>{{6, 3}, {1, 1}};
    p.feat_type = std::vector<DataType>{DataType::kFloat32, DataType::kFloat16, DataType::kBFloat16,
                                        DataType::kFloat64}[trial % 4];
    p.loc_type = p.feat_type == DataType::kFloat64 ? DataType::kFloat64 : DataType::kFloat32;
    p.valid = 0.3 + 0.2 * (trial % 4);
    auto in = makeDaInputs(p, rng);
    checkOp(contribRegistry(), kOp, {}, in);
    auto r = runKernel(*contribRegistry(), kOp, {}, in, 0xff);
    ASSERT_TRUE(r.isOk()) << r.status().message();
    EXPECT_TRUE(allClose(r->outputs[0], independent(p, in)))
        << "trial " << trial << " " << dtypeName(p.feat_type);
  }
}

TEST(DeformableAggregation, AliasesOfPublicExporters) {
  const RegisteredOp* op = contribRegistry()->find(kOp);
  ASSERT_NE(op, nullptr);
  for (const char* alias : {"custom::DeformableAttentionAggrPlugin", "nv::MSDA",
                            "SparseDrive::DeformableAggregation"}) {
    EXPECT_EQ(contribRegistry()->find(alias), op) << alias;
    DaProblem p;
    std::mt19937_64 rng(2);
    auto in = makeDaInputs(p, rng);
    auto a = runKernel(*contribRegistry(), alias, {}, in, 0xff);
    auto b = runKernel(*contribRegistry(), kOp, {}, in, 0x00);
    ASSERT_TRUE(a.isOk() && b.isOk());
    EXPECT_EQ(a->outputs[0].data, b->outputs[0].data);
  }
  EXPECT_EQ(op->schema().backward, "opforge::DeformableAggregationGrad");
}

namespace {
std::string buildError(std::vector<TensorValue> in) {
  auto r = runKernel(*contribRegistry(), kOp, {}, in, 0xff);
  return r.isOk() ? std::string("(no error)") : r.status().message();
}
}  // namespace

TEST(DeformableAggregation, BuildTimeErrors) {
  DaProblem p;
  std::mt19937_64 rng(3);
  const auto good = makeDaInputs(p, rng);
  ASSERT_EQ(buildError(good), "(no error)");
  auto has = [](const std::string& msg, const std::string& needle) {
    return ::testing::AssertionResult(msg.find(needle) != std::string::npos) << msg;
  };
  {  // C not divisible by G
    DaProblem q = p;
    q.C = 10;
    auto in = makeDaInputs(q, rng);
    EXPECT_TRUE(
        has(buildError(in), "C = 10 of mc_ms_feat is not divisible by the group count G = 4"));
  }
  {  // rank mismatch
    auto in = good;
    in[3].desc.dims = {p.B, p.A, p.P * p.Ncam, 2};
    EXPECT_TRUE(has(buildError(in), "input 'sampling_location' must have rank 5"));
  }
  {  // A of weights vs locations
    auto in = good;
    in[4].desc.dims[1] = p.A + 1;
    in[4].data.resize(in[4].desc.bytes());
    EXPECT_TRUE(has(buildError(in), "A of weights and sampling_location must agree"));
  }
  {  // Ncam of the tables vs locations
    auto in = good;
    in[3].desc.dims[3] = p.Ncam + 1;
    in[3].data.resize(in[3].desc.bytes());
    EXPECT_TRUE(has(buildError(in), "Ncam of sampling_location and spatial_shape must agree"));
  }
  {  // fp16 locations
    auto in = good;
    in[3].desc.dtype = DataType::kFloat16;
    in[3].data.resize(in[3].desc.bytes());
    EXPECT_TRUE(has(buildError(in), "sampling_location and weights must be FP32"));
  }
  {  // spatial shapes that do not add up to F
    auto in = good;
    reinterpret_cast<int32_t*>(in[1].data.data())[1] =
        5;  // level 0 of camera 0: 4x5 instead of 4x6
    EXPECT_TRUE(has(buildError(in),
                    "cover " + std::to_string(p.F() - 4) +
                        " rows (sum of H*W) but mc_ms_feat has F = " + std::to_string(p.F())));
  }
  {  // a start index that points outside F (constant tables: caught at build)
    auto in = good;
    reinterpret_cast<int32_t*>(in[2].data.data())[3] = static_cast<int32_t>(p.F() - 2);
    EXPECT_TRUE(has(buildError(in), "scale_start_index[1][1] = " + std::to_string(p.F() - 2)));
  }
  {  // negative spatial shape
    auto in = good;
    reinterpret_cast<int32_t*>(in[1].data.data())[0] = -4;
    EXPECT_TRUE(has(buildError(in), "is negative"));
  }
}

TEST(DeformableAggregation, RunTimeTableErrorsNeverReadOutside) {
  // Tables given as network inputs: the builder cannot see them; the kernel checks them.
  DaProblem p;
  std::mt19937_64 rng(4);
  auto in = makeDaInputs(p, rng);
  auto ok = runEngine(contribRegistry(), kOp, {}, in);
  ASSERT_TRUE(ok.isOk()) << ok.status().message();
  {
    auto bad = in;
    reinterpret_cast<int32_t*>(bad[2].data.data())[3] =
        static_cast<int32_t>(p.F() - 1);  // 2x3 level from F-1
    auto r = runEngine(contribRegistry(), kOp, {}, bad);
    ASSERT_FALSE(r.isOk());
    EXPECT_NE(r.status().message().find("scale_start_index[1][1] = " + std::to_string(p.F() - 1)),
              std::string::npos)
        << r.status().message();
    EXPECT_NE(r.status().message().find("outside mc_ms_feat's " + std::to_string(p.F()) + " rows"),
              std::string::npos);
  }
  {
    auto bad = in;
    reinterpret_cast<int32_t*>(bad[1].data.data())[2] = 1000;  // H of level 1 of camera 0
    auto r = runEngine(contribRegistry(), kOp, {}, bad);
    ASSERT_FALSE(r.isOk());
    EXPECT_NE(r.status().message().find("spatial_shape[0][1] = (1000, 3)"), std::string::npos)
        << r.status().message();
  }
  {
    auto bad = in;
    reinterpret_cast<int32_t*>(bad[2].data.data())[0] = -1;
    auto r = runEngine(contribRegistry(), kOp, {}, bad);
    ASSERT_FALSE(r.isOk());
    EXPECT_EQ(r.status().code(), StatusCode::kOutOfRange) << r.status().message();
  }
}

TEST(DeformableAggregation, NonFiniteMaskedPointsStayOut) {
  // Masked points (NaN, Inf, 0, 1, outside) contribute nothing: outputs stay finite.
  DaProblem p;
  p.valid = 0.5;
  std::mt19937_64 rng(5);
  auto in = makeDaInputs(p, rng);
  auto r = runKernel(*contribRegistry(), kOp, {}, in, 0xff);
  ASSERT_TRUE(r.isOk());
  for (double y : toDoubles(r->outputs[0])) ASSERT_TRUE(std::isfinite(y));
}

TEST(DeformableAggregation, EmptyDimensions) {
  for (int which = 0; which < 3; ++which) {
    DaProblem p;
    if (which == 0) p.A = 0;
    if (which == 1) p.P = 0;
    if (which == 2) p.B = 0;
    std::mt19937_64 rng(6);
    auto in = makeDaInputs(p, rng);
    auto r = runKernel(*contribRegistry(), kOp, {}, in, 0xff);
    ASSERT_TRUE(r.isOk()) << r.status().message();
    for (double y : toDoubles(r->outputs[0])) EXPECT_EQ(y, 0.0);
  }
}
