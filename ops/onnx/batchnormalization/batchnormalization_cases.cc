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
  // training_mode = 1: batch statistics, and the running_mean / running_var outputs.
  add({"BatchNormalization",
       A({{"training_mode", int64_t{1}}, {"momentum", 0.8}}),
       {T({4, 3, 6, 5}), T({3}), T({3}), T({3}), R(TT, {3}, 0.5, 2)},
       kF,
       10,
       false,
       "training"});
  // NF-ResNet's weight standardization: one image, a channel per filter, momentum 0.
  add({"BatchNormalization",
       A({{"training_mode", int64_t{1}}, {"momentum", 0.0}}),
       {T({1, 40, 27}), R(F32, {40}, 0.5, 1.5), R(F32, {40}, -1, 1), R(F32, {40}, -1, 1),
        R(F32, {40}, 0.5, 2)},
       {F32, F16, B16},
       10,
       false,
       "training, FP32 statistics"});
}

}  // namespace opforge::test::cases
