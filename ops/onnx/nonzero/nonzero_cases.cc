// The GPU test cases of ai.onnx::NonZero, run by opforge_gpu_onnx_tests (tests/op_cases.h).
#include "op_cases.h"

namespace opforge::test::cases {

OPFORGE_BUILTIN_CASES(nonzero) {
  add({"NonZero", {}, {R(TT, {6, 7, 5}, -1, 1)}, {F32, I32, BOOL, F16}});
}

}  // namespace opforge::test::cases
