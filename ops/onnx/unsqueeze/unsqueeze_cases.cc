// The GPU test cases of ai.onnx::Unsqueeze, run by opforge_gpu_onnx_tests (tests/op_cases.h).
#include "op_cases.h"

namespace opforge::test::cases {

OPFORGE_BUILTIN_CASES(unsqueeze) {
  add({"Unsqueeze", {}, {T({3, 5}), Vi({0, -1})}, kAll});
}

}  // namespace opforge::test::cases
