// The GPU test cases of ai.onnx::LogSoftmax, run by opforge_gpu_onnx_tests (tests/op_cases.h):
// those of the softmax family (ops/onnx/common/softmax_family_cases.h).
#include "../common/softmax_family_cases.h"

namespace opforge::test::cases {

OPFORGE_BUILTIN_CASES(logsoftmax) {
  softmaxFamilyCases(add, "LogSoftmax");
}

}  // namespace opforge::test::cases
