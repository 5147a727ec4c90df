// The GPU test cases of ai.onnx::RoiAlign, run by opforge_gpu_onnx_tests (tests/op_cases.h).
#include "op_cases.h"

namespace opforge::test::cases {

OPFORGE_BUILTIN_CASES(roialign) {
  // Regions inside, across and outside the image (samples beyond -1 / H count as 0).
  const std::vector<double> boxes{0,  0, 9,  11, 2.5, 1.5, 6.25, 7, -3, -2, 4, 3,
                                  10, 8, 20, 30, 5,   5,   5,    5, 7,  1,  3, 9};
  add({"RoiAlign",
       A({{"output_height", int64_t{3}},
          {"output_width", int64_t{4}},
          {"sampling_ratio", int64_t{2}},
          {"spatial_scale", 0.75}}),
       {T({2, 3, 12, 10}), V(TT, {6, 4}, boxes), V(I64, {6}, {0, 1, 1, 0, 1, 0})},
       kF,
       10,
       false,
       "avg half_pixel"});
  add({"RoiAlign",
       A({{"output_height", int64_t{2}},
          {"output_width", int64_t{3}},
          {"mode", std::string("max")},
          {"coordinate_transformation_mode", std::string("output_half_pixel")}}),
       {T({2, 3, 12, 10}), V(TT, {6, 4}, boxes), V(I64, {6}, {1, 0, 1, 1, 0, 0})},
       kF,
       10,
       false,
       "max output_half_pixel, adaptive sampling"});
  // Random regions, adaptive sampling, many bins.
  add({"RoiAlign",
       A({{"output_height", int64_t{7}}, {"output_width", int64_t{7}}, {"spatial_scale", 0.5}}),
       {T({3, 5, 17, 23}), R(TT, {20, 4}, -4, 40), R(I64, {20}, 0, 2)},
       {F32, F16, F64},
       10,
       false,
       "random regions"});
}

}  // namespace opforge::test::cases
