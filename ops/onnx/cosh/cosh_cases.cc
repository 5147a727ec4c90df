// The GPU test cases of ai.onnx::Cosh, run by opforge_gpu_onnx_tests (tests/op_cases.h).
#include "op_cases.h"

namespace opforge::test::cases {

OPFORGE_BUILTIN_CASES(cosh) {
  // Unary float ops: a contiguous shape with a tail (vector width does not divide it).
  add({"Cosh", {}, {T({3, 7, 33}, -4, 4)}, kF, 1, true});
}

}  // namespace opforge::test::cases
