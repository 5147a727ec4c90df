// The GPU test cases of ai.onnx::Shrink, run by opforge_gpu_onnx_tests (tests/op_cases.h).
#include "op_cases.h"

namespace opforge::test::cases {

OPFORGE_BUILTIN_CASES(shrink) {
  add({"Shrink",
       A({{"bias", 0.5}, {"lambd", 1.0}}),
       {T({4, 33}, -4, 4)},
       {F32, F16, B16, F64, I32, I8},
       1,
       true});
}

}  // namespace opforge::test::cases
