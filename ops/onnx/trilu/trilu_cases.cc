// The GPU test cases of ai.onnx::Trilu, run by opforge_gpu_onnx_tests (tests/op_cases.h).
#include "op_cases.h"

namespace opforge::test::cases {

OPFORGE_BUILTIN_CASES(trilu) {
  add({"Trilu", {}, {T({2, 5, 6})}, {F32, F16, I64, BOOL}});
  add({"Trilu", A({{"upper", int64_t{0}}}), {T({2, 5, 6}), V(I64, {}, {-1})}, {F32, I8}});
}

}  // namespace opforge::test::cases
