// ai.onnx::GridSample on the CPU at coordinates no image has: NaN gives NaN (no pixel is there; as
// PyTorch's bilinear and bicubic grid_sample), infinities and 1e30 are outside (zeros padding: 0)
// or at the edge (border), and the mirror image of an infinity is NaN — in every mode, and never an
// index out of range (the reference cast floor(NaN) and floor(1e30) to int64 before).
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "op_harness.h"

using namespace opforge;
using namespace opforge::test;

namespace {

// X = [1, 1, 3, 4] holding 1..12; one grid point per coordinate pair given.
Result<std::vector<double>> sample(const std::string& mode, const std::string& pad,
                                   const std::vector<float>& xy) {
  std::vector<float> img(12);
  for (int i = 0; i < 12; ++i) img[i] = static_cast<float>(i + 1);
  const int64_t points = static_cast<int64_t>(xy.size() / 2);
  auto r = runKernel(*Registry::global(), "ai.onnx::GridSample",
                     {{"mode", mode}, {"padding_mode", pad}, {"align_corners", int64_t{0}}},
                     {fromFloats({1, 1, 3, 4}, img), fromFloats({1, 1, points, 2}, xy)}, 0xff);
  if (!r) return r.status();
  return toDoubles(r->outputs[0]);
}

}  // namespace

TEST(GridSample, NonFiniteAndFarCoordinatesAreNaNZeroOrTheEdge) {
  const float nan = std::numeric_limits<float>::quiet_NaN(),
              inf = std::numeric_limits<float>::infinity();
  // (x, y) pairs: NaN in x, NaN in y, +inf, -inf, 1e30, -1e30, and one point inside (0, 0) whose
  // value is the image's centre: bilinear (x 1.5, y 1) of rows 1..2 -> 6.5.
  const std::vector<float> xy = {nan,  0,     0,     nan,    inf,    inf, -inf,
                                 -inf, 1e30f, 1e30f, -1e30f, -1e30f, 0,   0};
  for (const char* mode : {"linear", "nearest", "cubic"})
    for (const char* pad : {"zeros", "border", "reflection"}) {
      SCOPED_TRACE(std::string(mode) + " " + pad);
      auto got = sample(mode, pad, xy);
      ASSERT_TRUE(got.isOk()) << got.status().message();
      ASSERT_EQ(got->size(), 7u);
      EXPECT_TRUE(std::isnan((*got)[0]));  // NaN in x or in y, in every padding mode
      EXPECT_TRUE(std::isnan((*got)[1]));
      const std::string p = pad;
      for (int i = p == "reflection" ? 4 : 2; i < 7; ++i)
        EXPECT_TRUE(std::isfinite((*got)[i])) << i;
      if (p == "zeros") {
        for (int i = 2; i < 6; ++i) EXPECT_EQ((*got)[i], 0) << i;
      } else if (p == "border") {
        // +inf and 1e30 clamp to the last pixel (12), -inf and -1e30 to the first (1); cubic's
        // weights sum to 1 over taps clamped to one pixel.
        EXPECT_NEAR((*got)[2], 12, 1e-9);
        EXPECT_NEAR((*got)[3], 1, 1e-9);
        EXPECT_NEAR((*got)[4], 12, 1e-9);
        EXPECT_NEAR((*got)[5], 1, 1e-9);
      } else {
        EXPECT_TRUE(std::isnan((*got)[2]));  // the mirror image of an infinity
        EXPECT_TRUE(std::isnan((*got)[3]));
      }
      if (std::string(mode) != "nearest") {
        EXPECT_NEAR((*got)[6], 6.5, 1e-6);
      }
    }
}
