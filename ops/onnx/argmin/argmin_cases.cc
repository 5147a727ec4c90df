// The GPU test cases of ai.onnx::ArgMin, run by opforge_gpu_onnx_tests (tests/op_cases.h).
#include "op_cases.h"

namespace opforge::test::cases {

OPFORGE_BUILTIN_CASES(argmin) {
  add({"ArgMin", A({{"axis", int64_t{0}}}), {T({6, 5})}, kFI});
  add({"ArgMin",
       A({{"axis", int64_t{1}}, {"select_last_index", int64_t{1}}}),
       {T({3, 40}, -3, 3)},
       {F32, I32}});
}

}  // namespace opforge::test::cases
