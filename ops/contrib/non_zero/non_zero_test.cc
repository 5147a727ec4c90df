// example::non_zero_plugin: indices in row-major order and the size tensor, every input type.
#include <gtest/gtest.h>

#include "op_harness.h"

using namespace opforge;
using namespace opforge::test;

TEST(NonZero, MatchesAScanOnRandomInputs) {
  std::mt19937_64 rng(7);
  for (int trial = 0; trial < 24; ++trial) {
    const DataType t = std::vector<DataType>{DataType::kFloat32, DataType::kFloat16,
                                             DataType::kInt32, DataType::kBool}[trial % 4];
    std::vector<int64_t> dims = {1 + static_cast<int64_t>(rng() % 9),
                                 1 + static_cast<int64_t>(rng() % 9)};
    TensorValue x = randomTensor(t, dims, rng, -2, 2);  // integers in [-2, 2]: many zeros
    if (isFloatType(t))
      for (int64_t i = 0; i < x.desc.numel(); i += 2) storeFromDouble(x.data.data(), t, i, 0.0);
    checkOp(contribRegistry(), "example::non_zero_plugin", {}, {x});
    auto r = runKernel(*contribRegistry(), "example::non_zero_plugin", {}, {x}, 0xff);
    ASSERT_TRUE(r.isOk()) << r.status().message();
    std::vector<double> want;
    for (int64_t i = 0; i < x.desc.numel(); ++i)
      if (loadAsDouble(x.data.data(), t, i) != 0) {
        want.push_back(static_cast<double>(i / dims[1]));
        want.push_back(static_cast<double>(i % dims[1]));
      }
    EXPECT_EQ(toDoubles(r->outputs[0]), want);
    EXPECT_EQ(r->outputs[0].desc.dims,
              (std::vector<int64_t>{static_cast<int64_t>(want.size() / 2), 2}));
    EXPECT_EQ(toDoubles(r->outputs[1]), (std::vector<double>{want.size() / 2.0}));
  }
}

TEST(NonZero, EmptyAndFull) {
  TensorValue zeros = fromFloats({2, 3}, {0, 0, 0, 0, 0, 0});
  auto r = runKernel(*contribRegistry(), "example::non_zero_plugin", {}, {zeros}, 0xff);
  ASSERT_TRUE(r.isOk());
  EXPECT_EQ(r->outputs[0].desc.dims, (std::vector<int64_t>{0, 2}));
  auto e = runEngine(contribRegistry(), "example::non_zero_plugin", {}, {zeros});
  ASSERT_TRUE(e.isOk()) << e.status().message();
  EXPECT_EQ(e->outputs[0].desc.dims, (std::vector<int64_t>{0, 2}));
  TensorValue full = fromFloats({1, 4}, {1, -1, NAN, 2});  // NaN is non-zero
  auto f = runKernel(*contribRegistry(), "example::non_zero_plugin", {}, {full}, 0xff);
  EXPECT_EQ(toDoubles(f->outputs[1]), (std::vector<double>{4}));
}
