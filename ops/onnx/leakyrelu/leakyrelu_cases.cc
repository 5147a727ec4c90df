// The GPU test cases of ai.onnx::LeakyRelu, run by opforge_gpu_onnx_tests (tests/op_cases.h).
#include "op_cases.h"

namespace opforge::test::cases {

OPFORGE_BUILTIN_CASES(leakyrelu) {
  add({"LeakyRelu", A({{"alpha", 0.1}}), {T({4, 33}, -4, 4)}, kF, 1, true});
}

}  // namespace opforge::test::cases
