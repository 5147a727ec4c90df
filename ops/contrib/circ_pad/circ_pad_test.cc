// example::circ_pad_plugin: the reference against an independent formula, and through the engine.
#include <gtest/gtest.h>

#include "op_harness.h"

using namespace opforge;
using namespace opforge::test;

TEST(CircPad, MatchesTheDefinitionOnRandomShapes) {
  std::mt19937_64 rng(42);
  for (int trial = 0; trial < 40; ++trial) {
    const int rank = 1 + static_cast<int>(rng() % 5);
    std::vector<int64_t> dims(rank);
    for (auto& d : dims) d = 1 + static_cast<int64_t>(rng() % 5);
    const int padded = 1 + static_cast<int>(rng() % rank);
    std::vector<int32_t> pads(2 * padded);
    for (auto& p : pads)
      p = static_cast<int32_t>(rng() % 4);  // may exceed the dim: wraps more than once
    const DataType t = std::vector<DataType>{DataType::kFloat32, DataType::kFloat16,
                                             DataType::kBFloat16}[trial % 3];
    TensorValue x = randomTensor(t, dims, rng);
    Attrs attrs{{"pads", pads}};
    checkOp(contribRegistry(), "example::circ_pad_plugin", attrs, {x});
    auto r = runKernel(*contribRegistry(), "example::circ_pad_plugin", attrs, {x}, 0xff);
    ASSERT_TRUE(r.isOk()) << r.status().message();
    const TensorValue& y = r->outputs[0];
    // y[o] = x[(o_d - before_d) mod n_d for every d]
    std::vector<int64_t> out = dims, before(rank, 0);
    for (int i = 0; i < padded; ++i) {
      out[rank - 1 - i] += pads[2 * i] + pads[2 * i + 1];
      before[rank - 1 - i] = pads[2 * i];
    }
    ASSERT_EQ(y.desc.dims, out);
    std::vector<int64_t> idx(rank, 0);
    for (int64_t i = 0; i < y.desc.numel(); ++i) {
      int64_t src = 0;
      for (int a = 0; a < rank; ++a)
        src = src * dims[a] + (((idx[a] - before[a]) % dims[a]) + dims[a]) % dims[a];
      ASSERT_EQ(loadAsDouble(y.data.data(), t, i), loadAsDouble(x.data.data(), t, src))
          << "trial " << trial;
      for (int a = rank - 1; a >= 0; --a) {
        if (++idx[a] < out[a]) break;
        idx[a] = 0;
      }
    }
  }
}

TEST(CircPad, SeedExampleValues) {
  // 1-D [0,1,2] padded (2,1) -> [1,2,0,1,2,0]
  auto r = runKernel(*contribRegistry(), "example::circ_pad_plugin",
                     {{"pads", std::vector<int32_t>{2, 1}}}, {fromFloats({3}, {0, 1, 2})}, 0xff);
  ASSERT_TRUE(r.isOk());
  EXPECT_EQ(toDoubles(r->outputs[0]), (std::vector<double>{1, 2, 0, 1, 2, 0}));
}
