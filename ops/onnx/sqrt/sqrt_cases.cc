// The GPU test cases of ai.onnx::Sqrt, run by opforge_gpu_onnx_tests (tests/op_cases.h).
#include "op_cases.h"

namespace opforge::test::cases {

OPFORGE_BUILTIN_CASES(sqrt) {
  // Unary float ops: a contiguous shape with a tail (vector width does not divide it).
  add({"Sqrt", {}, {T({3, 7, 33}, 0.05, 9)}, kF, 1, true});
}

}  // namespace opforge::test::cases
