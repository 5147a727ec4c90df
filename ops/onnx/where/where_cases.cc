// The GPU test cases of ai.onnx::Where, run by opforge_gpu_onnx_tests (tests/op_cases.h).
#include "op_cases.h"

namespace opforge::test::cases {

OPFORGE_BUILTIN_CASES(where) {
  add({"Where", {}, {R(BOOL, {3, 1, 7}, 0, 1), T({3, 4, 7}), T({7})}, kAll});
  add({"Where", {}, {R(BOOL, {3, 33}, 0, 1), T({3, 33}), T({3, 33})}, {F32, I64}});
}

}  // namespace opforge::test::cases
