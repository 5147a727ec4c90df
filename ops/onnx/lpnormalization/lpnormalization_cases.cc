// The GPU test cases of ai.onnx::LpNormalization, run by opforge_gpu_onnx_tests
// (tests/op_cases.h).
#include "op_cases.h"

namespace opforge::test::cases {

OPFORGE_BUILTIN_CASES(lpnormalization) {
  add({"LpNormalization", {}, {T({6, 37})}, kF, 10});
  add({"LpNormalization", A({{"axis", int64_t{1}}, {"p", int64_t{1}}}), {T({3, 9, 4, 5})}, kF, 10});
  add({"LpNormalization", A({{"axis", int64_t{0}}}), {T({50, 3})}, {F32, F64}, 10});
}

}  // namespace opforge::test::cases
