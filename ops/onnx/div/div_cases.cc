// The GPU test cases of ai.onnx::Div, run by opforge_gpu_onnx_tests (tests/op_cases.h).
#include "op_cases.h"

namespace opforge::test::cases {

OPFORGE_BUILTIN_CASES(div) {
  // Binary ops: same shapes (vector path), a scalar, and numpy broadcasting.
  add({"Div", {}, {T({3, 5, 33}), T({3, 5, 33}, -2, 2, 0.5)}, kFI, 1, true});
  add({"Div", {}, {T({3, 5, 33}), T({}, 0.5, 2, 0.5)}, kFI, 1, true});
  add({"Div", {}, {T({4, 1, 6}), T({3, 1}, -2, 2, 0.5)}, kFI});
  add({"Div", {}, {T({2, 3, 4, 5}), T({3, 1, 5}, -2, 2, 0.5)}, {F32, F16, I64}});
  add({"Div",
       {},
       {T({4, 17}, -50, 50), T({4, 17}, -9, 9, 1)},
       {I32, I64, I8, U8},
       1,
       false,
       "integer division"});
}

}  // namespace opforge::test::cases
