// The GPU test cases of ai.onnx::GroupNormalization, run by opforge_gpu_onnx_tests
// (tests/op_cases.h).
#include "op_cases.h"

namespace opforge::test::cases {

OPFORGE_BUILTIN_CASES(groupnormalization) {
  add({"GroupNormalization",
       A({{"num_groups", int64_t{2}}}),
       {T({2, 4, 5, 3}), T({4}), T({4})},
       kF,
       10});
  add({"GroupNormalization",
       A({{"num_groups", int64_t{2}}}),
       {T({2, 4, 5}), T({2}), T({2})},
       {F32},
       10,
       false,
       "per-group scale (opset 18)"});
}

}  // namespace opforge::test::cases
