// The GPU test cases of ai.onnx::InstanceNormalization, run by opforge_gpu_onnx_tests
// (tests/op_cases.h).
#include "op_cases.h"

namespace opforge::test::cases {

OPFORGE_BUILTIN_CASES(instancenormalization) {
  add({"InstanceNormalization", {}, {T({2, 3, 5, 7}), T({3}), T({3})}, kF, 10});
}

}  // namespace opforge::test::cases
