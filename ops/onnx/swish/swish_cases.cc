// The GPU test cases of ai.onnx::Swish, run by opforge_gpu_onnx_tests (tests/op_cases.h).
#include "op_cases.h"

namespace opforge::test::cases {

OPFORGE_BUILTIN_CASES(swish) {
  add({"Swish", A({{"alpha", 1.3}}), {T({4, 33}, -6, 6)}, kF, 1, true});
}

}  // namespace opforge::test::cases
