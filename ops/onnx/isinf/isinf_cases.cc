// The GPU test cases of ai.onnx::IsInf, run by opforge_gpu_onnx_tests (tests/op_cases.h).
#include "op_cases.h"

namespace opforge::test::cases {

OPFORGE_BUILTIN_CASES(isinf) {
  add({"IsInf",
       A({{"detect_negative", int64_t{1}}, {"detect_positive", int64_t{0}}}),
       {T({4, 33})},
       kF,
       1,
       true});
}

}  // namespace opforge::test::cases
