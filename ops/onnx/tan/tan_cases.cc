// The GPU test cases of ai.onnx::Tan, run by opforge_gpu_onnx_tests (tests/op_cases.h).
#include "op_cases.h"

namespace opforge::test::cases {

OPFORGE_BUILTIN_CASES(tan) {
  // Unary float ops: a contiguous shape with a tail (vector width does not divide it).
  add({"Tan", {}, {T({3, 7, 33}, -1.3, 1.3)}, kF, 1, true});
}

}  // namespace opforge::test::cases
