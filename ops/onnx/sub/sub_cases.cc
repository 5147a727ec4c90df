// The GPU test cases of ai.onnx::Sub, run by opforge_gpu_onnx_tests (tests/op_cases.h).
#include "op_cases.h"

namespace opforge::test::cases {

OPFORGE_BUILTIN_CASES(sub) {
  // Binary ops: same shapes (vector path), a scalar, and numpy broadcasting.
  add({"Sub", {}, {T({3, 5, 33}), T({3, 5, 33})}, kFI, 1, true});
  add({"Sub", {}, {T({3, 5, 33}), T({}, 0.5, 2)}, kFI, 1, true});
  add({"Sub", {}, {T({4, 1, 6}), T({3, 1})}, kFI});
  add({"Sub", {}, {T({2, 3, 4, 5}), T({3, 1, 5})}, {F32, F16, I64}});
}

}  // namespace opforge::test::cases
