// example::circ_pad_plugin_grad: float64 gradients against central finite differences of the
// padding (computed here from its definition), lower precisions against float64, the engine path.
#include <gtest/gtest.h>

#include "op_harness.h"
#include "ops/contrib/common/grad_check.h"

using namespace opforge;
using namespace opforge::test;

namespace {
// The forward padding from its definition: y[o] = x[(o_d - before_d) mod n_d].
TensorValue padFp64(const TensorValue& x, const std::vector<int32_t>& pads) {
  const auto& dims = x.desc.dims;
  const int rank = static_cast<int>(dims.size());
  std::vector<int64_t> out = dims, before(rank, 0);
  for (size_t i = 0; i < pads.size() / 2; ++i) {
    out[rank - 1 - i] += pads[2 * i] + pads[2 * i + 1];
    before[rank - 1 - i] = pads[2 * i];
  }
  TensorValue y{TensorDesc{DataType::kFloat64, out}, {}};
  y.data.assign(y.desc.bytes(), 0);
  std::vector<int64_t> idx(rank, 0);
  for (int64_t i = 0; i < y.desc.numel(); ++i) {
    int64_t src = 0;
    for (int a = 0; a < rank; ++a)
      src = src * dims[a] + (((idx[a] - before[a]) % dims[a]) + dims[a]) % dims[a];
    storeFromDouble(y.data.data(), DataType::kFloat64, i,
                    loadAsDouble(x.data.data(), DataType::kFloat64, src));
    for (int a = rank - 1; a >= 0; --a) {
      if (++idx[a] < out[a]) break;
      idx[a] = 0;
    }
  }
  return y;
}
}  // namespace

TEST(CircPadGrad, MatchesFiniteDifferencesInFloat64) {
  std::mt19937_64 rng(41);
  for (int trial = 0; trial < 12; ++trial) {
    const int rank = 1 + trial % 4;
    std::vector<int64_t> dims(rank);
    for (auto& d : dims) d = 1 + static_cast<int64_t>(rng() % 4);
    const int padded = 1 + static_cast<int>(rng() % rank);
    std::vector<int32_t> pads(2 * padded);
    for (auto& p : pads)
      p = static_cast<int32_t>(rng() % 6);  // may exceed the dimension: several wraps
    TensorValue x = randomTensor(DataType::kFloat64, dims, rng);
    TensorValue dy = padFp64(x, pads);
    dy = randomTensor(DataType::kFloat64, dy.desc.dims, rng);
    auto g = runKernel(*contribRegistry(), "example::circ_pad_plugin_grad", {{"pads", pads}}, {dy},
                       0xff);
    ASSERT_TRUE(g.isOk()) << g.status().message();
    ASSERT_EQ(g->outputs[0].desc.dims, dims);
    const auto fd = fdGradient(
        [&](const std::vector<TensorValue>& in) { return padFp64(in[0], pads); }, {x}, 0, dy, 1e-3);
    const auto got = toDoubles(g->outputs[0]);
    for (size_t i = 0; i < fd.size(); ++i)
      EXPECT_NEAR(got[i], fd[i], 1e-9 * (1 + std::fabs(fd[i])))
          << "trial " << trial << " element " << i;
  }
}

TEST(CircPadGrad, EveryTypeAndTheEngine) {
  std::mt19937_64 rng(42);
  const std::vector<int32_t> pads = {2, 1, 3, 0};
  for (DataType t : {DataType::kFloat32, DataType::kFloat16, DataType::kBFloat16}) {
    TensorValue dy = randomTensor(t, {2, 3, 5, 7}, rng);
    checkOp(contribRegistry(), "example::circ_pad_plugin_grad", {{"pads", pads}}, {dy});
    auto g = runKernel(*contribRegistry(), "example::circ_pad_plugin_grad", {{"pads", pads}}, {dy},
                       0xff);
    ASSERT_TRUE(g.isOk());
    EXPECT_EQ(g->outputs[0].desc.dims, (std::vector<int64_t>{2, 3, 2, 4}));
    // Total mass is preserved: sum(dx) = sum(dy).
    double sx = 0, sy = 0;
    for (double v : toDoubles(g->outputs[0])) sx += v;
    for (double v : toDoubles(dy)) sy += v;
    EXPECT_NEAR(sx, sy, 1e-2 * (1 + std::fabs(sy))) << dtypeName(t);
  }
}

TEST(CircPadGrad, PadsThatLeaveNothingAreAnError) {
  auto r = runKernel(*contribRegistry(), "example::circ_pad_plugin_grad",
                     {{"pads", std::vector<int32_t>{2, 2}}}, {fromFloats({4}, {1, 2, 3, 4})}, 0xff);
  ASSERT_FALSE(r.isOk());
  EXPECT_NE(r.status().message().find("must exceed its pads"), std::string::npos)
      << r.status().message();
  const RegisteredOp* fwd = contribRegistry()->find("example::circ_pad_plugin");
  ASSERT_NE(fwd, nullptr);
  EXPECT_EQ(fwd->schema().backward, "example::circ_pad_plugin_grad");
}
