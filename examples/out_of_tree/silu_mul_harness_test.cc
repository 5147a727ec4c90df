// ext::silu_mul through opforge's op harness (opforge_add_op_test): for each data type and random
// shapes, the CPU reference twice with different poison bytes must agree bit for bit, and the
// whole engine (builder, plan file, runtime) must agree with it.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <random>

#include "op_harness.h"

using namespace opforge;

TEST(SiluMul, EveryTypeOnRandomShapes) {
  auto reg = test::registryWith(OPFORGE_OP_LIBRARY);
  std::mt19937_64 rng(11);
  std::uniform_int_distribution<int64_t> rank(1, 4), extent(1, 9);
  for (DataType t : {DataType::kFloat32, DataType::kFloat16, DataType::kBFloat16}) {
    for (int i = 0; i < 4; ++i) {
      std::vector<int64_t> dims(rank(rng));
      for (auto& d : dims) d = extent(rng);
      SCOPED_TRACE(std::string(dtypeName(t)) + " case " + std::to_string(i));
      test::checkOp(
          reg, "ext::silu_mul", {},
          {test::randomTensor(t, dims, rng, -4, 4), test::randomTensor(t, dims, rng, -4, 4)});
    }
  }
}

// Every tactic through the engine, each pinned in a plan of its own: the CPU reference and, on a
// machine with a GPU (and a build with CUDA), the CUDA tactic, against the reference.
TEST(SiluMul, EveryTacticMatchesTheReference) {
  auto reg = test::registryWith(OPFORGE_OP_LIBRARY);
  std::mt19937_64 rng(12);
  for (DataType t : {DataType::kFloat32, DataType::kFloat16, DataType::kBFloat16}) {
    SCOPED_TRACE(dtypeName(t));
    auto r = test::checkOpTactics(
        reg, "ext::silu_mul", {},
        {test::randomTensor(t, {3, 257}, rng, -4, 4), test::randomTensor(t, {3, 257}, rng, -4, 4)});
    ASSERT_FALSE(r.checked.empty());
    EXPECT_EQ(r.checked.front(), "cpu 0 reference");
    // The CUDA tactic exists only when the library was built with CUDA; then a GPU runs it.
    const bool cuda =
        std::find(r.checked.begin(), r.checked.end(), "cuda 1 cuda.generic") != r.checked.end();
    if (r.gpu && reg->find("ext::silu_mul")->schema().tactics.size() > 1) EXPECT_TRUE(cuda);
    EXPECT_TRUE(r.not_applicable.empty());
  }
}

TEST(SiluMul, ReferenceMatchesTheFormula) {
  auto reg = test::registryWith(OPFORGE_OP_LIBRARY);
  auto a = test::fromFloats({4}, {-2.f, 0.f, 1.f, 3.f}),
       b = test::fromFloats({4}, {1.f, 5.f, -1.f, 2.f});
  auto run = test::runKernel(*reg, "ext::silu_mul", {}, {a, b}, 0xff);
  ASSERT_TRUE(run) << run.status().message();
  auto y = test::toDoubles(run->outputs[0]);
  const double x[4] = {-2, 0, 1, 3}, g[4] = {1, 5, -1, 2};
  for (int i = 0; i < 4; ++i) EXPECT_NEAR(y[i], x[i] / (1 + std::exp(-x[i])) * g[i], 1e-6) << i;
}

// Installed, the harness finds opforge's own contrib library beside the libopforge.so it runs with.
TEST(SiluMul, HarnessFindsTheInstalledPrefix) {
  EXPECT_TRUE(std::filesystem::exists(test::contribLibrary())) << test::contribLibrary();
  auto reg = test::registryWith(test::contribLibrary());
  EXPECT_NE(reg->find("example::circ_pad_plugin"), nullptr);
}
