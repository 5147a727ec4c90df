// The GPU test cases of ai.onnx::Resize, run by opforge_gpu_onnx_tests (tests/op_cases.h).
#include "op_cases.h"

namespace opforge::test::cases {

OPFORGE_BUILTIN_CASES(resize) {
  add({"Resize",
       A({{"mode", std::string("nearest")}}),
       {T({1, 2, 5, 6}), None(), V(F32, {4}, {1, 1, 2, 1.5})},
       {F32, F16, I32, U8},
       10});
  add({"Resize",
       A({{"mode", std::string("nearest")}}),
       {T({2, 3, 4, 5}), None(), V(F32, {4}, {1, 1.5, 2, 1})},
       {F32},
       10,
       false,
       "a resized channel axis"});
  add({"Resize",
       A({{"mode", std::string("linear")}}),
       {T({2, 3, 300}), None(), V(F32, {3}, {1, 1, 1.5})},
       {F32},
       10,
       false,
       "1-D, rows wider than a block"});
  add({"Resize",
       A({{"mode", std::string("linear")},
          {"coordinate_transformation_mode", std::string("align_corners")}}),
       {T({1, 2, 5, 6}), None(), None(), Vi({1, 2, 9, 4})},
       kF,
       10});
  add({"Resize",
       A({{"mode", std::string("cubic")}, {"exclude_outside", int64_t{1}}}),
       {T({1, 2, 6, 7}), None(), V(F32, {4}, {1, 1, 0.5, 1.5})},
       {F32, F64},
       10});
  add({"Resize",
       A({{"mode", std::string("linear")}, {"antialias", int64_t{1}}}),
       {T({1, 1, 12, 10}), None(), None(), Vi({1, 1, 5, 4})},
       {F32},
       10,
       false,
       "antialias"});
  add({"Resize",
       A({{"mode", std::string("linear")},
          {"coordinate_transformation_mode", std::string("tf_crop_and_resize")},
          {"extrapolation_value", 3.0}}),
       {T({1, 1, 6, 6}), V(F32, {8}, {0, 0, -0.2, 0.1, 1, 1, 0.9, 1.3}), None(), Vi({1, 1, 5, 7})},
       {F32},
       10,
       false,
       "crop and resize, extrapolation"});
  add({"Resize",
       A({{"mode", std::string("nearest")},
          {"keep_aspect_ratio_policy", std::string("not_larger")},
          {"axes", ints({2, 3})}}),
       {T({1, 2, 6, 8}), None(), None(), Vi({9, 9})},
       {F32},
       10,
       false,
       "aspect policy"});
}

}  // namespace opforge::test::cases
