// The GPU test cases of ai.onnx::Dropout, run by opforge_gpu_onnx_tests (tests/op_cases.h).
#include "op_cases.h"

namespace opforge::test::cases {

OPFORGE_BUILTIN_CASES(dropout) {
  add({"Dropout", {}, {T({4, 33})}, kF});
}

}  // namespace opforge::test::cases
