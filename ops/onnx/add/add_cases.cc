// The GPU test cases of ai.onnx::Add, run by opforge_gpu_onnx_tests (tests/op_cases.h).
#include "op_cases.h"

namespace opforge::test::cases {

OPFORGE_BUILTIN_CASES(add) {
  // Binary ops: same shapes (vector path), a scalar, and numpy broadcasting.
  add({"Add", {}, {T({3, 5, 33}), T({3, 5, 33})}, kFI, 1, true});
  add({"Add", {}, {T({3, 5, 33}), T({}, 0.5, 2)}, kFI, 1, true});
  add({"Add", {}, {T({4, 1, 6}), T({3, 1})}, kFI});
  add({"Add", {}, {T({2, 3, 4, 5}), T({3, 1, 5})}, {F32, F16, I64}});
  // Vector rows: the innermost axis broadcast on one side, then on the other; a row operand.
  add({"Add", {}, {T({2, 3, 16}), T({2, 3, 1})}, kF, 1, true});
  add({"Add", {}, {T({2, 1, 1}), T({2, 3, 16})}, kF});
  add({"Add", {}, {T({4, 3, 16}), T({16})}, kFI});
}

}  // namespace opforge::test::cases
