// The GPU test cases of ai.onnx::Sign, run by opforge_gpu_onnx_tests (tests/op_cases.h).
#include "op_cases.h"

namespace opforge::test::cases {

OPFORGE_BUILTIN_CASES(sign) {
  add({"Sign", {}, {T({5, 67}, -9, 9)}, kFI, 1, true});
}

}  // namespace opforge::test::cases
