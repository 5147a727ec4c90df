// The GPU test cases of ai.onnx::Not, run by opforge_gpu_onnx_tests (tests/op_cases.h).
#include "op_cases.h"

namespace opforge::test::cases {

OPFORGE_BUILTIN_CASES(not ) {
  add({"Not", {}, {T({5, 67})}, {BOOL}, 1, true});
}

}  // namespace opforge::test::cases
