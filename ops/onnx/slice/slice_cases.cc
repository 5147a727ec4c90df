// The GPU test cases of ai.onnx::Slice, run by opforge_gpu_onnx_tests (tests/op_cases.h).
#include "op_cases.h"

namespace opforge::test::cases {

OPFORGE_BUILTIN_CASES(slice) {
  add({"Slice", {}, {T({5, 6, 7}), Vi({1, -5}), Vi({4, 100}), Vi({0, 2}), Vi({1, 2})}, kAll});
  add({"Slice",
       {},
       {T({5, 6, 7}), Vi({4, -1}), Vi({0, -100}), Vi({0, 1}), Vi({-2, -1})},
       {F32, F16, I64},
       1,
       false,
       "negative steps"});
  add({"Slice", {}, {T({5, 6}), V(I32, {1}, {1}), V(I32, {1}, {4})}, {F32}});
  // Swin's patch merging: every other row of [N, H, W, C] (whole rows of W x C kept: the 16-byte
  // copy), then every other column (runs of C).
  add({"Slice",
       {},
       {T({2, 8, 6, 16}), Vi({1}), Vi({100}), Vi({1}), Vi({2})},
       kAll,
       1,
       false,
       "every other row, whole trailing rows (16-byte units)"});
  add({"Slice",
       {},
       {T({2, 4, 6, 16}), Vi({0}), Vi({100}), Vi({2}), Vi({2})},
       kAll,
       1,
       false,
       "every other column, runs of 16 channels"});
  // The planned shape keeps every axis whole but the step reverses the last one: the 16-byte
  // kernel finds the run not contiguous and copies element by element.
  add({"Slice",
       {},
       {T({3, 4, 8}), Vi({-1}), Vi({-100}), Vi({2}), Vi({-1})},
       {F32, F16, U8, I64},
       1,
       false,
       "a whole axis reversed (the element fallback of the 16-byte kernel)"});
  add({"Slice",
       A({{"starts", ints({1})}, {"ends", ints({3})}, {"axes", ints({1})}}),
       {T({4, 6})},
       {F32, U8},
       1,
       false,
       "opset < 10 attributes"});
}

}  // namespace opforge::test::cases
