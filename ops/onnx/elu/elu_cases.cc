// The GPU test cases of ai.onnx::Elu, run by opforge_gpu_onnx_tests (tests/op_cases.h).
#include "op_cases.h"

namespace opforge::test::cases {

OPFORGE_BUILTIN_CASES(elu) {
  add({"Elu", A({{"alpha", 0.7}}), {T({4, 33}, -4, 4)}, kF, 1, true});
}

}  // namespace opforge::test::cases
