// The GPU test cases of ai.onnx::Range, run by opforge_gpu_onnx_tests (tests/op_cases.h).
#include "op_cases.h"

namespace opforge::test::cases {

OPFORGE_BUILTIN_CASES(range) {
  add({"Range", {}, {V(TT, {}, {2}), V(TT, {}, {31}), V(TT, {}, {3})}, {F32, F64, I32, I64, I16}});
  add({"Range", {}, {V(TT, {}, {1}), V(TT, {}, {-2}), V(TT, {}, {-0.25})}, {F32, F64}});
}

}  // namespace opforge::test::cases
