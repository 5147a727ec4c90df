// The GPU test cases of ai.onnx::BitwiseAnd, run by opforge_gpu_onnx_tests (tests/op_cases.h).
#include "op_cases.h"

namespace opforge::test::cases {

OPFORGE_BUILTIN_CASES(bitwiseand) {
  add({"BitwiseAnd",
       {},
       {T({3, 33}, -100, 100), T({3, 33}, -100, 100)},
       {I32, I64, I8, U8, U16},
       1,
       true});
}

}  // namespace opforge::test::cases
