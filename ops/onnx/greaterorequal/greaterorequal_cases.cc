// The GPU test cases of ai.onnx::GreaterOrEqual, run by opforge_gpu_onnx_tests (tests/op_cases.h).
#include "op_cases.h"

namespace opforge::test::cases {

OPFORGE_BUILTIN_CASES(greaterorequal) {
  add({"GreaterOrEqual",
       {},
       {T({3, 33}, -3, 3), T({3, 33}, -3, 3)},
       {F32, F16, F64, I32, I64, I8, U8},
       1,
       true});
}

}  // namespace opforge::test::cases
