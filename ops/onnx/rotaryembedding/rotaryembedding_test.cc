// ai.onnx::RotaryEmbedding on the CPU: a hand-checked rotation (both pair layouts), and bad input
// (attributes, shapes, a position id outside the caches) named with the node, the op and the value.
#include <gtest/gtest.h>

#include "op_harness.h"

using namespace opforge;
using namespace opforge::test;

namespace {

const char* kRope = "ai.onnx::RotaryEmbedding";

}  // namespace

TEST(RotaryEmbedding, RotatesPairs) {
  // One head of 4: pairs (0, 2), (1, 3) rotated by cos/sin rows; position 1 picks row 1.
  TensorValue x = fromFloats({1, 1, 1, 4}, {1, 2, 3, 4});
  TensorValue cs = fromFloats({2, 2}, {9, 9, 0, 1});
  TensorValue sn = fromFloats({2, 2}, {9, 9, 1, 0});
  auto r = runKernel(*Registry::global(), kRope, {}, {x, cs, sn, fromInt64s({1, 1}, {1})}, 0xff);
  ASSERT_TRUE(r.isOk()) << r.status().message();
  // Pair (1, 3) with cos 0, sin 1: (-3, 1); pair (2, 4) with cos 1, sin 0: (2, 4).
  EXPECT_EQ(toDoubles(r->outputs[0]), (std::vector<double>{-3, 2, 1, 4}));
  // Interleaved: pairs (1, 2) and (3, 4).
  auto i = runKernel(*Registry::global(), kRope, {{"interleaved", int64_t{1}}},
                     {x, cs, sn, fromInt64s({1, 1}, {1})}, 0xff);
  ASSERT_TRUE(i.isOk()) << i.status().message();
  EXPECT_EQ(toDoubles(i->outputs[0]), (std::vector<double>{-2, 1, 3, 4}));
}

TEST(RotaryEmbedding, BadInputIsNamed) {
  TensorValue x = fromFloats({1, 1, 1, 4}, {1, 2, 3, 4});
  TensorValue cs = fromFloats({2, 2}, {1, 1, 1, 1});
  auto r = runEngine(Registry::global(), kRope, {}, {x, cs, cs, fromInt64s({1, 1}, {2})});
  ASSERT_FALSE(r.isOk());
  expectError(r.status(), {"RotaryEmbedding", "'position_ids' holds 2 at position 0", "[0, 1]"});
  NetworkDefinition net(Registry::global());
  auto x3 = *net.addInput("x3", DataType::kFloat32, {1, 3, 12});
  auto c2 = *net.addInput("c2", DataType::kFloat32, {5, 3});
  auto c4 = *net.addInput("c4", DataType::kFloat32, {5, 4});
  auto pid = *net.addInput("pid", DataType::kInt64, {1, 3});
  expectError(net.addOp(kRope, {x3, c2, c2, pid}, {}, "rope_node").status(),
              {"rope_node", "ai.onnx::RotaryEmbedding", "needs the attribute num_heads"});
  expectError(
      net.addOp(kRope, {x3, c2, c2, pid}, {{"rotary_embedding_dim", int64_t{3}}}, "rope_node")
          .status(),
      {"rope_node", "rotary_embedding_dim must be even", "3"});
  expectError(
      net.addOp(kRope, {x3, c2, c2, pid}, {{"num_heads", int64_t{5}}}, "rope_node").status(),
      {"rope_node", "multiple of num_heads (5)"});
  expectError(
      net.addOp(kRope, {x3, c4, c4, pid}, {{"num_heads", int64_t{2}}}, "rope_node").status(),
      {"rope_node", "'cos_cache' must have R / 2 columns", "4 vs 3"});
  expectError(net.addOp(kRope, {x3, c2, c2}, {{"num_heads", int64_t{2}}}, "rope_node").status(),
              {"rope_node", "'cos_cache' must have rank 3"});
}
