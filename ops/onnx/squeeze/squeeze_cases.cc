// The GPU test cases of ai.onnx::Squeeze, run by opforge_gpu_onnx_tests (tests/op_cases.h).
#include "op_cases.h"

namespace opforge::test::cases {

OPFORGE_BUILTIN_CASES(squeeze) {
  add({"Squeeze", {}, {T({3, 1, 5}), Vi({1})}, kAll});
}

}  // namespace opforge::test::cases
