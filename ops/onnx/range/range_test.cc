// ai.onnx::Range's shape rule on constants near INT64's ends: the element count is computed in 128
// bits (an ONNX fuzzer finding: the 64-bit form overflowed under UBSan), and a count over 2^40 is
// an error naming the node.
#include <gtest/gtest.h>

#include <cstring>
#include <limits>

#include "op_harness.h"

using namespace opforge;
using namespace opforge::test;

namespace {

TensorValue i64(int64_t v) {
  TensorValue t{{DataType::kInt64, {}}, std::vector<uint8_t>(8)};
  std::memcpy(t.data.data(), &v, 8);
  return t;
}

}  // namespace

TEST(Range, CountsNearInt64sEndsDoNotOverflow) {
  const int64_t big = std::numeric_limits<int64_t>::max();
  NetworkDefinition net(Registry::global());
  auto c = [&](int64_t v, const std::string& name) { return *net.addConstant(name, i64(v)); };
  // start 10491, limit 0, delta -(2^63 - 1): one element.
  auto r = net.addOp("ai.onnx::Range", {c(10491, "s"), c(0, "l"), c(-big, "d")}, {}, "one");
  ASSERT_TRUE(r.isOk()) << r.status().message();
  EXPECT_EQ(net.shapeOf((*r)[0]), "[1]");
  // start 0, limit 2^62, delta 1: 2^62 elements, over the limit.
  expectError(
      net.addOp("ai.onnx::Range", {c(0, "s2"), c(int64_t{1} << 62, "l2"), c(1, "d2")}, {}, "huge")
          .status(),
      {"huge", "ai.onnx::Range", "too many elements"});
}

// Elements that fit where i * delta alone does not (start near INT64's top, delta near -2^62):
// the reference computes start + i * delta in two's complement (an ONNX fuzzer finding: signed
// overflow under UBSan).
TEST(Range, ElementsFitWhereTheStepProductDoesNot) {
  const int64_t start = (int64_t{1} << 62) + (int64_t{1} << 61);
  const int64_t delta = -((int64_t{1} << 62) + (int64_t{1} << 60));
  const int64_t limit = -(int64_t{1} << 62) - 1;
  auto run = runKernel(*Registry::global(), "ai.onnx::Range", {},
                       {i64(start), i64(limit), i64(delta)}, 0xA5);
  ASSERT_TRUE(run.isOk()) << run.status().message();
  const TensorValue& y = run->outputs[0];
  ASSERT_EQ(y.desc.dims, (std::vector<int64_t>{3}));
  std::vector<int64_t> got(3);
  std::memcpy(got.data(), y.data.data(), 24);
  EXPECT_EQ(got, (std::vector<int64_t>{start, int64_t{1} << 60, -(int64_t{1} << 62)}));
}
