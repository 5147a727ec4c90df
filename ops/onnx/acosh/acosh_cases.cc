// The GPU test cases of ai.onnx::Acosh, run by opforge_gpu_onnx_tests (tests/op_cases.h).
#include "op_cases.h"

namespace opforge::test::cases {

OPFORGE_BUILTIN_CASES(acosh) {
  // Unary float ops: a contiguous shape with a tail (vector width does not divide it).
  add({"Acosh", {}, {T({3, 7, 33}, 1.05, 6)}, kF, 1, true});
}

}  // namespace opforge::test::cases
