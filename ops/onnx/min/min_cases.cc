// The GPU test cases of ai.onnx::Min, run by opforge_gpu_onnx_tests (tests/op_cases.h).
#include "op_cases.h"

namespace opforge::test::cases {

OPFORGE_BUILTIN_CASES(min) {
  add({"Min", {}, {T({3, 17}), T({3, 17}), T({17})}, kFI});
  add({"Min", {}, {T({3, 17})}, {F32, I32}, 1, false, "one input"});
}

}  // namespace opforge::test::cases
