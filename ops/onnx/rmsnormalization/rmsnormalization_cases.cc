// The GPU test cases of ai.onnx::RMSNormalization, run by opforge_gpu_onnx_tests
// (tests/op_cases.h).
#include "op_cases.h"

namespace opforge::test::cases {

OPFORGE_BUILTIN_CASES(rmsnormalization) {
  add({"RMSNormalization", {}, {T({4, 3, 40}), T({40})}, kF, 10});
  add({"RMSNormalization", A({{"axis", int64_t{1}}}), {T({4, 3, 40}), T({1, 40})}, {F32, B16}, 10});
}

}  // namespace opforge::test::cases
