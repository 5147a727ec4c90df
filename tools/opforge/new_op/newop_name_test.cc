// newop_ns::newop_name: the test as `opforge new-op` wrote it. It checks the CPU reference ONLY:
// the skeleton's reference is the identity (y = x), there is no CUDA tactic yet. When the op's math
// is written, replace `expected` with its formula (computed independently, in double).
#include <gtest/gtest.h>

#include <random>

#include "op_harness.h"

using namespace opforge;

namespace {
const char* kOp = "newop_ns::newop_name";

std::shared_ptr<Registry> registry() {
#ifdef OPFORGE_OP_LIBRARY
  return test::registryWith(OPFORGE_OP_LIBRARY);  // out of tree: opforge_add_op_test
#else
  return test::contribRegistry();  // inside opforge's tree: libopforge_ops.so
#endif
}

// What y should be for input x (TODO: the op's formula; the skeleton's is y = x).
TensorValue expected(const TensorValue& x) {
  return x;
}
}  // namespace

TEST(NewopName, ReferenceOnRandomShapes) {
  std::mt19937_64 rng(7);
  std::uniform_int_distribution<int64_t> rank(1, 4), extent(1, 9);
  for (int i = 0; i < 8; ++i) {
    std::vector<int64_t> dims(rank(rng));
    for (auto& d : dims) d = extent(rng);
    SCOPED_TRACE("case " + std::to_string(i));
    TensorValue x = test::randomTensor(DataType::kFloat32, dims, rng, -4, 4);
    // The reference twice with different poison bytes, bit for bit, and the engine against it.
    test::checkOp(registry(), kOp, {}, {x});
    auto run = test::runKernel(*registry(), kOp, {}, {x}, 0xff);
    ASSERT_TRUE(run) << run.status().message();
    EXPECT_TRUE(test::allClose(run->outputs[0], expected(x)));
  }
}
