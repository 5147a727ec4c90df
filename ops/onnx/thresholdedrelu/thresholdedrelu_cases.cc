// The GPU test cases of ai.onnx::ThresholdedRelu, run by opforge_gpu_onnx_tests (tests/op_cases.h).
#include "op_cases.h"

namespace opforge::test::cases {

OPFORGE_BUILTIN_CASES(thresholdedrelu) {
  add({"ThresholdedRelu", A({{"alpha", 0.5}}), {T({4, 33}, -4, 4)}, kF, 1, true});
}

}  // namespace opforge::test::cases
