// The GPU test cases of ai.onnx::Gather, run by opforge_gpu_onnx_tests (tests/op_cases.h).
#include "op_cases.h"

namespace opforge::test::cases {

OPFORGE_BUILTIN_CASES(gather) {
  // Valid indices, negative ones included.
  add({"Gather", A({{"axis", int64_t{1}}}), {T({3, 7, 5}), R(I64, {2, 4}, -7, 6)}, kAll, 1, true});
  add({"Gather", {}, {T({9, 16}), R(I32, {5}, -9, 8)}, {F32, F16, I64}, 1, true});
}

}  // namespace opforge::test::cases
