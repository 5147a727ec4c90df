// The GPU test cases of ai.onnx::Selu, run by opforge_gpu_onnx_tests (tests/op_cases.h).
#include "op_cases.h"

namespace opforge::test::cases {

OPFORGE_BUILTIN_CASES(selu) {
  add({"Selu", {}, {T({4, 33}, -4, 4)}, kF, 1, true});
}

}  // namespace opforge::test::cases
