// The GPU test cases of ai.onnx::Cast, run by opforge_gpu_onnx_tests (tests/op_cases.h).
#include "op_cases.h"

namespace opforge::test::cases {

OPFORGE_BUILTIN_CASES(cast) {
  for (DataType to : {F32, F16, B16, F64, I32, I64, I8, U8, BOOL})
    add({"Cast",
         A({{"to", int64_t{static_cast<int64_t>(to)}}}),
         {T({4, 33}, -300, 300)},
         kAll,
         1,
         true});
}

}  // namespace opforge::test::cases
