// ai.onnx::NonMaxSuppression on the CPU: a hand-checked selection, zero boxes, and bad input
// (attribute values, ranks, mismatched counts) refused with the node, the op and the value named.
#include <gtest/gtest.h>

#include <cstring>

#include "op_harness.h"

using namespace opforge;
using namespace opforge::test;

namespace {

const char* kNms = "ai.onnx::NonMaxSuppression";

std::vector<int64_t> ints(const TensorValue& t) {
  std::vector<int64_t> v(t.desc.numel());
  if (!v.empty()) std::memcpy(v.data(), t.data.data(), v.size() * 8);
  return v;
}

Status addNms(const std::vector<int64_t>& boxes, const std::vector<int64_t>& scores,
              const Attrs& attrs = {}) {
  NetworkDefinition net(Registry::global());
  auto b = net.addInput("boxes", DataType::kFloat32, boxes);
  auto s = net.addInput("scores", DataType::kFloat32, scores);
  if (!b) return b.status();
  if (!s) return s.status();
  return net.addOp(kNms, {*b, *s}, attrs, "nms_node").status();
}

}  // namespace

TEST(NonMaxSuppression, SelectsGreedilyPerClass) {
  // Boxes 0 and 1 overlap (IoU 0.9 / 1.1 > 0.5), 2 is apart, 3 has zero area (never suppressed).
  // Class 0: order 1, 3, 2, 0; 0 is dropped (by 1). Class 1: box 2 is below the score threshold;
  // order 0, 1, 3; 1 is dropped (by 0).
  TensorValue boxes = fromFloats({1, 4, 4}, {0, 0, 1, 1, 0, 0.1f, 1, 1.1f, 5, 5, 6, 6, 0, 0, 0, 1});
  TensorValue scores = fromFloats({1, 2, 4}, {0.6f, 0.9f, 0.7f, 0.8f, 0.5f, 0.4f, 0.05f, 0.3f});
  auto r = runEngine(
      Registry::global(), kNms, {},
      {boxes, scores, fromInt64s({1}, {10}), fromFloats({1}, {0.5f}), fromFloats({1}, {0.1f})});
  ASSERT_TRUE(r.isOk()) << r.status().message();
  ASSERT_EQ(r->outputs[0].desc.dims, (std::vector<int64_t>{5, 3}));
  EXPECT_EQ(ints(r->outputs[0]),
            (std::vector<int64_t>{0, 0, 1, 0, 0, 3, 0, 0, 2, 0, 1, 0, 0, 1, 3}));
  // max_output_boxes_per_class absent: nothing is selected.
  auto none = runEngine(Registry::global(), kNms, {}, {boxes, scores});
  ASSERT_TRUE(none.isOk()) << none.status().message();
  EXPECT_EQ(none->outputs[0].desc.dims, (std::vector<int64_t>{0, 3}));
}

TEST(NonMaxSuppression, ZeroBoxesGiveAnEmptySelection) {
  TensorValue boxes = fromFloats({2, 0, 4}, {});
  TensorValue scores = fromFloats({2, 3, 0}, {});
  auto r = runEngine(Registry::global(), kNms, {},
                     {boxes, scores, fromInt64s({1}, {5}), fromFloats({1}, {0.5f})});
  ASSERT_TRUE(r.isOk()) << r.status().message();
  EXPECT_EQ(r->outputs[0].desc.dims, (std::vector<int64_t>{0, 3}));
  auto k = runKernel(*Registry::global(), kNms, {}, {boxes, scores, fromInt64s({1}, {5})}, 0xff);
  ASSERT_TRUE(k.isOk()) << k.status().message();
  EXPECT_EQ(k->outputs[0].desc.dims, (std::vector<int64_t>{0, 3}));
}

TEST(NonMaxSuppression, BadInputIsNamed) {
  expectError(addNms({1, 5, 4}, {1, 2, 5}, {{"center_point_box", int64_t{2}}}),
              {"nms_node", "NonMaxSuppression", "center_point_box", "2"});
  expectError(addNms({5, 4}, {1, 2, 5}), {"nms_node", "NonMaxSuppression", "'boxes'", "rank 3"});
  expectError(addNms({1, 5, 4}, {2, 5}), {"nms_node", "'scores'", "rank 3"});
  expectError(addNms({1, 5, 3}, {1, 2, 5}), {"nms_node", "4 coordinates", "3 vs 4"});
  expectError(addNms({1, 5, 4}, {1, 2, 6}), {"nms_node", "box count", "6 vs 5"});
  expectError(addNms({2, 5, 4}, {1, 2, 5}), {"nms_node", "batch count", "1 vs 2"});
  // Scalars of the wrong type or size.
  NetworkDefinition net(Registry::global());
  auto b = *net.addInput("boxes", DataType::kFloat32, {1, 5, 4});
  auto s = *net.addInput("scores", DataType::kFloat32, {1, 2, 5});
  auto m32 = *net.addInput("m32", DataType::kInt32, {1});
  auto m2 = *net.addInput("m2", DataType::kInt64, {2});
  expectError(net.addOp(kNms, {b, s, m32}, {}, "nms_node").status(),
              {"nms_node", "'max_output_boxes_per_class'", "INT64", "INT32"});
  expectError(net.addOp(kNms, {b, s, m2}, {}, "nms_node").status(),
              {"nms_node", "'max_output_boxes_per_class'", "one value", "2"});
  auto f16 = *net.addInput("b16", DataType::kFloat16, {1, 5, 4});
  expectError(net.addOp(kNms, {f16, s}, {}, "nms_node").status(),
              {"nms_node", "'boxes'", "FP16", "does not support"});
}
