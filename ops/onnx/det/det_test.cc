// ai.onnx::Det on the CPU: exact determinants of small matrices (pivoting, permutations, a singular
// matrix giving exactly 0, the empty matrix giving 1), batch dims, FP16, and bad input named with
// the node, the op and the dims.
#include <gtest/gtest.h>

#include <cmath>

#include "op_harness.h"

using namespace opforge;
using namespace opforge::test;

namespace {

const char* kDet = "ai.onnx::Det";

Result<std::vector<double>> det(const TensorValue& x, std::vector<int64_t> want_dims) {
  auto r = runKernel(*Registry::global(), kDet, {}, {x}, 0xff);
  if (!r) return r.status();
  EXPECT_EQ(r->outputs[0].desc.dims, want_dims);
  EXPECT_EQ(r->outputs[0].desc.dtype, x.desc.dtype);
  return toDoubles(r->outputs[0]);
}

}  // namespace

TEST(Det, ExactValuesOfSmallMatrices) {
  // 2-D input: a scalar.
  auto two = det(fromFloats({2, 2}, {1, 2, 3, 4}), {});
  ASSERT_TRUE(two.isOk()) << two.status().message();
  EXPECT_EQ(*two, (std::vector<double>{-2}));
  // A batch of 3x3: singular (rows 0 and 1 dependent; exactly 0, no NaN), a cyclic permutation
  // (+1, two row exchanges), a single swap (-1), the zero matrix, and a matrix whose first pivot
  // is in the last row (one exchange, then triangular: -(4 * 3 * 2)).
  auto batch = det(fromFloats({5, 3, 3}, {1, 2, 3, 2, 4, 6, 1, 0, 1,  //
                                          0, 1, 0, 0, 0, 1, 1, 0, 0,  //
                                          0, 1, 0, 1, 0, 0, 0, 0, 1,  //
                                          0, 0, 0, 0, 0, 0, 0, 0, 0,  //
                                          0, 0, 2, 0, 3, 1, 4, 1, 1}),
                   {5});
  ASSERT_TRUE(batch.isOk()) << batch.status().message();
  EXPECT_EQ(*batch, (std::vector<double>{0, 1, -1, 0, -24}));
  for (double v : *batch) EXPECT_FALSE(std::isnan(v));
  // 4x4 with pivoting throughout (numpy: 72).
  auto four = det(
      fromValues(DataType::kFloat64, {4, 4}, {1, 2, 3, 4, 5, 6, 7, 8, 2, 6, 4, 8, 3, 1, 1, 2}), {});
  ASSERT_TRUE(four.isOk()) << four.status().message();
  EXPECT_NEAR((*four)[0], 72, 1e-12);
}

TEST(Det, BatchDimsEmptyMatricesAndFp16) {
  // [2, 2, 1, 1]: the determinant of a 1x1 matrix is its entry.
  auto ones = det(fromValues(DataType::kFloat32, {2, 2, 1, 1}, {3, -4, 0.5, 0}), {2, 2});
  ASSERT_TRUE(ones.isOk()) << ones.status().message();
  EXPECT_EQ(*ones, (std::vector<double>{3, -4, 0.5, 0}));
  // 0x0 matrices: 1 (the empty product); no matrices: an empty output.
  auto empty = det(fromValues(DataType::kFloat32, {3, 0, 0}, {}), {3});
  ASSERT_TRUE(empty.isOk()) << empty.status().message();
  EXPECT_EQ(*empty, (std::vector<double>{1, 1, 1}));
  auto none = det(fromValues(DataType::kFloat32, {0, 2, 2}, {}), {0});
  ASSERT_TRUE(none.isOk()) << none.status().message();
  EXPECT_TRUE(none->empty());
  // FP16 and BF16: computed in double, rounded once (det [[2, 1], [1, 3]] = 5; [[0.5, 1], [2,
  // 0.25]] = 0.125 - 2 = -1.875).
  for (DataType t : {DataType::kFloat16, DataType::kBFloat16}) {
    auto h = det(fromValues(t, {2, 2, 2}, {2, 1, 1, 3, 0.5, 1, 2, 0.25}), {2});
    ASSERT_TRUE(h.isOk()) << h.status().message();
    EXPECT_EQ(*h, (std::vector<double>{5, -1.875})) << dtypeName(t);
  }
}

TEST(Det, BadInputIsNamed) {
  NetworkDefinition net(Registry::global());
  auto v = *net.addInput("v", DataType::kFloat32, {4});
  auto rect = *net.addInput("rect", DataType::kFloat32, {2, 3, 4});
  auto ints = *net.addInput("ints", DataType::kInt32, {3, 3});
  auto dyn = *net.addInput("dyn", DataType::kFloat32, {-1, -1});
  expectError(net.addOp(kDet, {v}, {}, "det_node").status(),
              {"det_node", "ai.onnx::Det", "input 'X' must have rank >= 2", "[4]"});
  expectError(net.addOp(kDet, {rect}, {}, "det_node").status(),
              {"det_node", "ai.onnx::Det", "square matrices", "[2, 3, 4]", "(3 vs 4)"});
  Status st = net.addOp(kDet, {ints}, {}, "det_node").status();
  EXPECT_EQ(st.code(), StatusCode::kUnsupported) << st.message();
  expectError(st, {"det_node", "input 'X'", "INT32"});
  // Symbolic dims: accepted, with a check at every concrete shape.
  auto r = net.addOp(kDet, {dyn}, {}, "det_dyn");
  ASSERT_TRUE(r.isOk()) << r.status().message();
  EXPECT_EQ(net.shapeOf((*r)[0]), "[]");
}
