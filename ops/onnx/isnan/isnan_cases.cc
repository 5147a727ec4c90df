// The GPU test cases of ai.onnx::IsNaN, run by opforge_gpu_onnx_tests (tests/op_cases.h).
#include "op_cases.h"

namespace opforge::test::cases {

OPFORGE_BUILTIN_CASES(isnan) {
  add({"IsNaN", {}, {T({4, 33})}, kF, 1, true});
}

}  // namespace opforge::test::cases
