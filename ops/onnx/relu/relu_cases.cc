// The GPU test cases of ai.onnx::Relu, run by opforge_gpu_onnx_tests (tests/op_cases.h).
#include "op_cases.h"

namespace opforge::test::cases {

OPFORGE_BUILTIN_CASES(relu) {
  add({"Relu", {}, {T({5, 67}, -9, 9)}, {F32, F16, B16, F64, I32, I64, I8}, 1, true});
}

}  // namespace opforge::test::cases
