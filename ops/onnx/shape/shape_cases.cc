// The GPU test cases of ai.onnx::Shape, run by opforge_gpu_onnx_tests (tests/op_cases.h).
#include "op_cases.h"

namespace opforge::test::cases {

OPFORGE_BUILTIN_CASES(shape) {
  add({"Shape", {}, {T({3, 4, 5})}, {F32, BOOL}});
  add({"Shape", A({{"start", int64_t{1}}, {"end", int64_t{-1}}}), {T({3, 4, 5, 6})}, {F16}});
}

}  // namespace opforge::test::cases
