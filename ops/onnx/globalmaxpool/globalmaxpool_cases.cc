// The GPU test cases of ai.onnx::GlobalMaxPool, run by opforge_gpu_onnx_tests (tests/op_cases.h).
#include "op_cases.h"

namespace opforge::test::cases {

OPFORGE_BUILTIN_CASES(globalmaxpool) {
  add({"GlobalMaxPool", {}, {T({2, 3, 7, 9})}, kF, 10});
  add({"GlobalMaxPool", {}, {T({1, 16, 48, 40})}, kF, 10});  // batch 1: cuda.hwc's split
}

}  // namespace opforge::test::cases
