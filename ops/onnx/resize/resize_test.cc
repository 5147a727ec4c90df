// ai.onnx::Resize and Upsample shape rules on scales that do not make a dimension: a scale that
// overflows int64 (a plan fuzzer's finding: the float-to-int conversion was undefined), a
// negative or NaN scale after tf_crop_and_resize's roi, each an error naming the node and scale.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

#include "op_harness.h"

using namespace opforge;
using namespace opforge::test;

namespace {

TensorValue floats(std::vector<int64_t> dims, std::vector<float> v) {
  TensorValue t{{DataType::kFloat32, std::move(dims)}, std::vector<uint8_t>(v.size() * 4)};
  std::memcpy(t.data.data(), v.data(), t.data.size());
  return t;
}

}  // namespace

TEST(Resize, ScalesThatMakeNoDimensionAreNamedErrors) {
  NetworkDefinition net(Registry::global());
  auto x = *net.addInput("x", DataType::kFloat32, {1, 1, 4, 4});
  auto none = TensorRef{};
  auto scales = [&](float s, const char* name) {
    return *net.addConstant(name, floats({4}, {1, 1, s, 1}));
  };
  expectError(
      net.addOp("ai.onnx::Resize", {x, none, scales(6.7e22f, "huge")}, {}, "resize_huge").status(),
      {"resize_huge", "ai.onnx::Resize", "makes an axis of 4 longer than 2^40", "axis 2"});
  expectError(
      net.addOp("ai.onnx::Resize", {x, none, scales(std::nanf(""), "nan")}, {}, "resize_nan")
          .status(),
      {"resize_nan", "must be positive"});
  // tf_crop_and_resize: the roi turns a positive scale into a negative one.
  auto roi = *net.addConstant("roi", floats({8}, {0, 0, 0.9f, 0, 1, 1, 0.1f, 1}));
  expectError(
      net.addOp("ai.onnx::Resize", {x, roi, scales(2, "two")},
                {{"coordinate_transformation_mode", std::string("tf_crop_and_resize")}}, "crop")
          .status(),
      {"crop", "must be a positive finite number", "axis 2"});
  expectError(
      net.addOp("ai.onnx::Upsample", {x, scales(1e30f, "up")}, {}, "upsample_huge").status(),
      {"upsample_huge", "longer than 2^40"});
}
