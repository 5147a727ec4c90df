// The GPU test cases of ai.onnx::Expand, run by opforge_gpu_onnx_tests (tests/op_cases.h).
#include "op_cases.h"

namespace opforge::test::cases {

OPFORGE_BUILTIN_CASES(expand) {
  add({"Expand", {}, {T({3, 1, 5}), Vi({2, 3, 4, 5})}, kAll, 1, true});
}

}  // namespace opforge::test::cases
