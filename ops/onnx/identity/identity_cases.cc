// The GPU test cases of ai.onnx::Identity, run by opforge_gpu_onnx_tests (tests/op_cases.h).
#include "op_cases.h"

namespace opforge::test::cases {

OPFORGE_BUILTIN_CASES(identity) {
  add({"Identity", {}, {T({4, 33})}, kAll});
}

}  // namespace opforge::test::cases
