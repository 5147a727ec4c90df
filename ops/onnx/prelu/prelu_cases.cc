// The GPU test cases of ai.onnx::PRelu, run by opforge_gpu_onnx_tests (tests/op_cases.h).
#include "op_cases.h"

namespace opforge::test::cases {

OPFORGE_BUILTIN_CASES(prelu) {
  add({"PRelu", {}, {T({2, 3, 9}), T({3, 1}, 0.1, 0.9)}, {F32, F16, B16, F64, I32}});
}

}  // namespace opforge::test::cases
