// The GPU test cases of ai.onnx::Size, run by opforge_gpu_onnx_tests (tests/op_cases.h).
#include "op_cases.h"

namespace opforge::test::cases {

OPFORGE_BUILTIN_CASES(size) {
  add({"Size", {}, {T({3, 4, 5})}, {F32, I8}});
}

}  // namespace opforge::test::cases
