// The GPU test cases of ai.onnx::EyeLike, run by opforge_gpu_onnx_tests (tests/op_cases.h).
#include "op_cases.h"

namespace opforge::test::cases {

OPFORGE_BUILTIN_CASES(eyelike) {
  add({"EyeLike", A({{"k", int64_t{1}}}), {T({4, 6})}, kAll});
  add({"EyeLike", A({{"dtype", int64_t{1}}}), {T({5, 3})}, {I64}});
}

}  // namespace opforge::test::cases
