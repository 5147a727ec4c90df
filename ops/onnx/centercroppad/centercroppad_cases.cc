// The GPU test cases of ai.onnx::CenterCropPad, run by opforge_gpu_onnx_tests (tests/op_cases.h).
// Data movement: exact.
#include "op_cases.h"

namespace opforge::test::cases {

OPFORGE_BUILTIN_CASES(centercroppad) {
  // Crop one axis by an odd amount, pad another by an odd amount, keep the third.
  add({"CenterCropPad", {}, {T({9, 6, 5}), Vi({4, 11, 5})}, kAll, 1, false, "crop and pad"});
  // Axes given (negative ones), an INT32 shape, a rank-4 input.
  add({"CenterCropPad",
       A({{"axes", ints({-2, -1})}}),
       {T({2, 3, 40, 33}), V(I32, {2}, {64, 20})},
       {F32, F16, I64, U8},
       1,
       false,
       "axes"});
}

}  // namespace opforge::test::cases
