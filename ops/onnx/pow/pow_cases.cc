// The GPU test cases of ai.onnx::Pow, run by opforge_gpu_onnx_tests (tests/op_cases.h).
#include "op_cases.h"

namespace opforge::test::cases {

OPFORGE_BUILTIN_CASES(pow) {
  add({"Pow", {}, {T({4, 17}, 0.2, 3), T({4, 17}, -2, 2)}, kF});
  add({"Pow", {}, {T({4, 17}, 0.2, 3), R(I64, {1}, 2, 3)}, kF, 1, false, "integer exponent"});
  add({"Pow", {}, {T({4, 17}, -5, 5), R(I32, {4, 17}, 0, 3)}, {I32, I64}});
}

}  // namespace opforge::test::cases
