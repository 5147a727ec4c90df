// The GPU test cases of ai.onnx::Xor, run by opforge_gpu_onnx_tests (tests/op_cases.h).
#include "op_cases.h"

namespace opforge::test::cases {

OPFORGE_BUILTIN_CASES(xor) {
  add({"Xor", {}, {T({3, 33}), T({1, 33})}, {BOOL}, 1, true});
}

}  // namespace opforge::test::cases
