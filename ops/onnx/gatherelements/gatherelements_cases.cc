// The GPU test cases of ai.onnx::GatherElements, run by opforge_gpu_onnx_tests (tests/op_cases.h).
#include "op_cases.h"

namespace opforge::test::cases {

OPFORGE_BUILTIN_CASES(gatherelements) {
  // Valid indices, negative ones included.
  add({"GatherElements",
       A({{"axis", int64_t{1}}}),
       {T({3, 5, 4}), R(I64, {3, 2, 4}, -5, 4)},
       kAll});
  add({"GatherElements", {}, {T({4, 3}), R(I32, {2, 2}, -4, 3)}, {F32, I64}});
}

}  // namespace opforge::test::cases
