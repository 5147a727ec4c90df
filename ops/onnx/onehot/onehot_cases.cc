// The GPU test cases of ai.onnx::OneHot, run by opforge_gpu_onnx_tests (tests/op_cases.h).
#include "op_cases.h"

namespace opforge::test::cases {

OPFORGE_BUILTIN_CASES(onehot) {
  add({"OneHot",
       {},
       {R(I64, {2, 5}, -6, 5), V(I64, {}, {6}), V(TT, {2}, {2, 9})},
       {F32, I32, I64, F16}});
  add({"OneHot",
       A({{"axis", int64_t{0}}}),
       {R(F32, {4}, -3, 3), V(F32, {}, {3}), V(TT, {2}, {0, 1})},
       {F32, BOOL}});
}

}  // namespace opforge::test::cases
