// ai.onnx::RoiAlign on the CPU: a hand-computed region, the opset default of
// coordinate_transformation_mode, and bad input (attributes, ranks, batch indices) named.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

#include "op_harness.h"

using namespace opforge;
using namespace opforge::test;

namespace {

const char* kRoi = "ai.onnx::RoiAlign";

Status addRoi(const std::vector<int64_t>& x, const std::vector<int64_t>& rois,
              const std::vector<int64_t>& bi, const Attrs& attrs = {},
              DataType bt = DataType::kInt64) {
  NetworkDefinition net(Registry::global());
  auto a = *net.addInput("x", DataType::kFloat32, x);
  auto r = *net.addInput("rois", DataType::kFloat32, rois);
  auto b = *net.addInput("bi", bt, bi);
  return net.addOp(kRoi, {a, r, b}, attrs, "roi_node").status();
}

}  // namespace

TEST(RoiAlign, MatchesAHandComputedRegion) {
  // X[0, 0] = row * 10 + col (4x4). The region (0, 0)-(2, 2), output_half_pixel, one bin of 2x2
  // samples at (0.5, 0.5), (0.5, 1.5), (1.5, 0.5), (1.5, 1.5): the mean of a linear image is its
  // value at the centre (1, 1) = 11. max: every corner of every sample has weight 0.25, so the
  // largest weighted corner is 0.25 * X[2, 2] = 0.25 * 22 (of the last sample).
  std::vector<float> img(16);
  for (int i = 0; i < 16; ++i) img[i] = static_cast<float>((i / 4) * 10 + i % 4);
  TensorValue x = fromFloats({1, 1, 4, 4}, img);
  TensorValue rois = fromFloats({1, 4}, {0, 0, 2, 2});
  Attrs avg{{"coordinate_transformation_mode", std::string("output_half_pixel")},
            {"sampling_ratio", int64_t{2}}};
  auto r = runEngine(Registry::global(), kRoi, avg, {x, rois, fromInt64s({1}, {0})});
  ASSERT_TRUE(r.isOk()) << r.status().message();
  EXPECT_TRUE(allClose(r->outputs[0], fromFloats({1, 1, 1, 1}, {11})));
  Attrs mx = avg;
  mx["mode"] = std::string("max");
  auto m = runEngine(Registry::global(), kRoi, mx, {x, rois, fromInt64s({1}, {0})});
  ASSERT_TRUE(m.isOk()) << m.status().message();
  EXPECT_TRUE(allClose(m->outputs[0], fromFloats({1, 1, 1, 1}, {0.25f * 22})));
  // half_pixel (the default from opset 16) shifts the region by -0.5: centre (0.5, 0.5) = 5.5.
  Attrs half{{"sampling_ratio", int64_t{2}}};
  auto h = runEngine(Registry::global(), kRoi, half, {x, rois, fromInt64s({1}, {0})});
  ASSERT_TRUE(h.isOk()) << h.status().message();
  EXPECT_TRUE(allClose(h->outputs[0], fromFloats({1, 1, 1, 1}, {5.5f})));
  // Opset 10 had no such attribute and no shift.
  Attrs old{{"sampling_ratio", int64_t{2}}, {"_onnx_opset", int64_t{10}}};
  auto o = runEngine(Registry::global(), kRoi, old, {x, rois, fromInt64s({1}, {0})});
  ASSERT_TRUE(o.isOk()) << o.status().message();
  EXPECT_TRUE(allClose(o->outputs[0], fromFloats({1, 1, 1, 1}, {11})));
}

TEST(RoiAlign, BadInputIsNamed) {
  expectError(addRoi({1, 2, 8, 8}, {3, 4}, {3}, {{"mode", std::string("sum")}}),
              {"roi_node", "RoiAlign", "mode", "'sum'"});
  expectError(addRoi({1, 2, 8, 8}, {3, 4}, {3}, {{"output_height", int64_t{0}}}),
              {"roi_node", "output_height", "0"});
  expectError(addRoi({1, 2, 8, 8}, {3, 4}, {3}, {{"sampling_ratio", int64_t{-1}}}),
              {"roi_node", "sampling_ratio", "-1"});
  expectError(addRoi({1, 2, 8, 8}, {3, 4}, {3},
                     {{"coordinate_transformation_mode", std::string("asymmetric")}}),
              {"roi_node", "coordinate_transformation_mode", "'asymmetric'"});
  expectError(addRoi({2, 8, 8}, {3, 4}, {3}), {"roi_node", "RoiAlign", "'X'", "rank 4"});
  expectError(addRoi({1, 2, 8, 8}, {3, 5}, {3}), {"roi_node", "4 coordinates", "5 vs 4"});
  expectError(addRoi({1, 2, 8, 8}, {3, 4}, {2}), {"roi_node", "'batch_indices'", "2 vs 3"});
  expectError(addRoi({1, 2, 8, 8}, {3, 4}, {3}, {}, DataType::kInt32),
              {"roi_node", "'batch_indices'", "INT64", "INT32"});
  expectError(addRoi({1, 2, 0, 8}, {3, 4}, {3}), {"roi_node", "non-empty"});
  // A batch index outside [0, N) at run time.
  TensorValue x = fromFloats({2, 1, 2, 2}, {1, 2, 3, 4, 5, 6, 7, 8});
  TensorValue rois = fromFloats({2, 4}, {0, 0, 1, 1, 0, 0, 1, 1});
  auto r = runEngine(Registry::global(), kRoi, {}, {x, rois, fromInt64s({2}, {1, 2})});
  ASSERT_FALSE(r.isOk());
  expectError(r.status(), {"RoiAlign", "'batch_indices' holds 2 at position 1", "[0, 1]"});
}

TEST(RoiAlign, WorkThatNoShapeBoundsIsLimited) {
  // sampling_ratio is a loop count that no tensor's size bounds: 2^40 (a plan edited so) looped
  // for ever; at most 1024 is accepted.
  expectError(addRoi({1, 2, 8, 8}, {3, 4}, {3}, {{"sampling_ratio", int64_t{1} << 40}}),
              {"roi_node", "sampling_ratio", "[0, 1024]", "1099511627776"});
  EXPECT_TRUE(addRoi({1, 2, 8, 8}, {3, 4}, {3}, {{"sampling_ratio", int64_t{1024}}}).isOk());
  // The adaptive count (sampling_ratio 0) comes from the data: a region of 1e30 pixels asked for
  // ceil(1e30) samples per bin, a NaN one cast NaN to an integer.
  TensorValue x = fromFloats({1, 1, 4, 4}, std::vector<float>(16, 1.f));
  auto huge = runEngine(Registry::global(), kRoi, {},
                        {x, fromFloats({1, 4}, {0, 0, 1e30f, 1e30f}), fromInt64s({1}, {0})});
  ASSERT_FALSE(huge.isOk());
  expectError(huge.status(), {"RoiAlign", "region 0 of input 'rois'", "samples per bin", "2^20"});
  auto nan = runEngine(Registry::global(), kRoi, {},
                       {x, fromFloats({1, 4}, {0, 0, std::nanf(""), 2}), fromInt64s({1}, {0})});
  ASSERT_FALSE(nan.isOk());
  expectError(nan.status(), {"RoiAlign", "region 0 of input 'rois'", "NaN"});
  // One axis empty, the other 1e30 pixels wide: 0 x 1e30 samples passed a bound on the product
  // alone, and then 1e30 was cast to an integer (UBSan found it in AttrLimits' sweep).
  auto flat = runEngine(Registry::global(), kRoi,
                        {{"coordinate_transformation_mode", std::string("half_pixel")}},
                        {x, fromFloats({1, 4}, {0, 0, 1e30f, -1e30f}), fromInt64s({1}, {0})});
  ASSERT_FALSE(flat.isOk());
  expectError(flat.status(), {"RoiAlign", "region 0 of input 'rois'", "samples per bin", "2^20"});
  // A large region within the limit still runs: 1000 x 1000 pixels, one bin, 1000 x 1000
  // samples of an image of ones: the 4 x 4 samples at 0.5 ... 3.5 are inside (weight 1 each), the
  // rest count as 0, so the mean is 16 / 10^6.
  auto big = runEngine(Registry::global(), kRoi,
                       {{"coordinate_transformation_mode", std::string("output_half_pixel")}},
                       {x, fromFloats({1, 4}, {0, 0, 1000, 1000}), fromInt64s({1}, {0})});
  ASSERT_TRUE(big.isOk()) << big.status().message();
  EXPECT_NEAR(toDoubles(big->outputs[0])[0], 16.0 / 1e6, 1e-9);
}
