// The GPU test cases of ai.onnx::Upsample, run by opforge_gpu_onnx_tests (tests/op_cases.h): the
// opset 9 form (scales input) and the opset 7 form (scales attribute), nearest and linear.
#include "op_cases.h"

namespace opforge::test::cases {

OPFORGE_BUILTIN_CASES(upsample) {
  add({"Upsample", {}, {T({2, 3, 5, 7}), V(F32, {4}, {1, 1, 2, 3})}, kFI, 1, false, "nearest"});
  add({"Upsample",
       A({{"mode", std::string("linear")}}),
       {T({2, 3, 6, 5}), V(F32, {4}, {1, 1, 2.5, 1.5})},
       kF,
       10,
       false,
       "linear, fractional scales"});
  add({"Upsample",
       A({{"mode", std::string("linear")}, {"scales", std::vector<float>{1, 2, 3}}}),
       {T({3, 4, 9})},
       kF,
       10,
       false,
       "opset 7 scales attribute"});
  add({"Upsample",
       A({{"scales", std::vector<float>{1, 4}}}),
       {T({70, 300})},
       {F32, I32, U8},
       1,
       false,
       "opset 7 nearest, many rows"});
}

}  // namespace opforge::test::cases
