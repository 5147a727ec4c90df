// The GPU test cases of ai.onnx::CastLike, run by opforge_gpu_onnx_tests (tests/op_cases.h).
#include "op_cases.h"

namespace opforge::test::cases {

OPFORGE_BUILTIN_CASES(castlike) {
  add({"CastLike", {}, {T({4, 33}, -300, 300), R(F16, {1}, 1, 1)}, kAll});
}

}  // namespace opforge::test::cases
