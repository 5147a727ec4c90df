// The GPU test cases of ai.onnx::Mul, run by opforge_gpu_onnx_tests (tests/op_cases.h).
#include "op_cases.h"

namespace opforge::test::cases {

OPFORGE_BUILTIN_CASES(mul) {
  // Binary ops: same shapes (vector path), a scalar, and numpy broadcasting.
  add({"Mul", {}, {T({3, 5, 33}), T({3, 5, 33})}, kFI, 1, true});
  add({"Mul", {}, {T({3, 5, 33}), T({}, 0.5, 2)}, kFI, 1, true});
  add({"Mul", {}, {T({4, 1, 6}), T({3, 1})}, kFI});
  add({"Mul", {}, {T({2, 3, 4, 5}), T({3, 1, 5})}, {F32, F16, I64}});
  // A squeeze-excitation scale (EfficientNet's x * s[N, C, 1, 1]), channels-last where run so.
  add({"Mul", {}, {T({2, 24, 5, 7}), T({2, 24, 1, 1})}, kF, 1, true});
}

}  // namespace opforge::test::cases
