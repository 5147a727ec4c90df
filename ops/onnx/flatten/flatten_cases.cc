// The GPU test cases of ai.onnx::Flatten, run by opforge_gpu_onnx_tests (tests/op_cases.h).
#include "op_cases.h"

namespace opforge::test::cases {

OPFORGE_BUILTIN_CASES(flatten) {
  add({"Flatten", A({{"axis", int64_t{2}}}), {T({3, 4, 5})}, kAll});
}

}  // namespace opforge::test::cases
