// The GPU test cases of ai.onnx::BatchNormalization, run by opforge_gpu_onnx_tests
// (tests/op_cases.h).
#include "op_cases.h"

namespace opforge::test::cases {

OPFORGE_BUILTIN_CASES(batchnormalization) {
  add({"BatchNormalization",
       {},
       {T({2, 3, 5, 4}), T({3}), T({3}), T({3}), R(TT, {3}, 0.5, 2)},
       kF,
       10});
  add({"BatchNormalization",
       {},
       {T({2, 3, 5}), R(F32, {3}, 0.5, 1.5), R(F32, {3}, -1, 1), R(F32, {3}, -1, 1),
        R(F32, {3}, 0.5, 2)},
       {F16, B16},
       10,
       false,
       "FP32 statistics"});
}

}  // namespace opforge::test::cases
