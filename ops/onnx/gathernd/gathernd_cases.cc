// The GPU test cases of ai.onnx::GatherND, run by opforge_gpu_onnx_tests (tests/op_cases.h).
#include "op_cases.h"

namespace opforge::test::cases {

OPFORGE_BUILTIN_CASES(gathernd) {
  // Valid indices, negative ones included.
  add({"GatherND", {}, {T({4, 5, 6}), R(I64, {3, 2}, -4, 3)}, kAll});
  add({"GatherND",
       A({{"batch_dims", int64_t{1}}}),
       {T({2, 5, 6}), R(I64, {2, 3, 1}, -5, 4)},
       {F32, F16, I32}});
}

}  // namespace opforge::test::cases
