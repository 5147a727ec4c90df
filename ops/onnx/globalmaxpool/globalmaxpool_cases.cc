// The GPU test cases of ai.onnx::GlobalMaxPool, run by opforge_gpu_onnx_tests (tests/op_cases.h).
#include "op_cases.h"

namespace opforge::test::cases {

OPFORGE_BUILTIN_CASES(globalmaxpool) {
  add({"GlobalMaxPool", {}, {T({2, 3, 7, 9})}, kF, 10});
}

}  // namespace opforge::test::cases
