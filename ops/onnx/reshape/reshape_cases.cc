// The GPU test cases of ai.onnx::Reshape, run by opforge_gpu_onnx_tests (tests/op_cases.h).
#include "op_cases.h"

namespace opforge::test::cases {

OPFORGE_BUILTIN_CASES(reshape) {
  add({"Reshape", {}, {T({3, 4, 5}), Vi({6, -1})}, kAll});
  add({"Reshape", {}, {T({3, 4, 5}), Vi({0, 0, 5})}, {F32}});
}

}  // namespace opforge::test::cases
