// The GPU test cases of ai.onnx::Mean, run by opforge_gpu_onnx_tests (tests/op_cases.h).
#include "op_cases.h"

namespace opforge::test::cases {

OPFORGE_BUILTIN_CASES(mean) {
  add({"Mean", {}, {T({2, 3, 5}), T({3, 1}), T({2, 3, 5})}, kF});
}

}  // namespace opforge::test::cases
