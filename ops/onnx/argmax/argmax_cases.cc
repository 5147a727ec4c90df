// The GPU test cases of ai.onnx::ArgMax, run by opforge_gpu_onnx_tests (tests/op_cases.h).
#include "op_cases.h"

namespace opforge::test::cases {

OPFORGE_BUILTIN_CASES(argmax) {
  add({"ArgMax", A({{"axis", int64_t{1}}}), {T({4, 9, 5})}, kFI});
  add({"ArgMax",
       A({{"axis", int64_t{-1}}, {"select_last_index", int64_t{1}}, {"keepdims", int64_t{0}}}),
       {T({4, 70}, -3, 3)},
       {F32, I8, F16}});
}

}  // namespace opforge::test::cases
