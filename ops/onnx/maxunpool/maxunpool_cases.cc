// The GPU test cases of ai.onnx::MaxUnpool, run by opforge_gpu_onnx_tests (tests/op_cases.h).
// Unique indices (equal ones leave the CUDA write order undefined).
#include "op_cases.h"

namespace opforge::test::cases {

OPFORGE_BUILTIN_CASES(maxunpool) {
  // One line of 96 distinct indices (U is unique along the last axis) into Y [1, 1, 1, 192].
  add({"MaxUnpool",
       A({{"kernel_shape", ints({1, 2})}, {"strides", ints({1, 2})}}),
       {T({1, 1, 1, 96}), U(I64, {1, 1, 1, 96}, 192)},
       kF,
       1,
       false,
       "flat indices"});
  add({"MaxUnpool",
       A({{"kernel_shape", ints({1, 2})}, {"strides", ints({1, 2})}}),
       {T({1, 1, 1, 96}), U(I64, {1, 1, 1, 96}, 192), Vi({1, 1, 3, 200})},
       {F32, F16},
       1,
       false,
       "output_shape"});
}

}  // namespace opforge::test::cases
