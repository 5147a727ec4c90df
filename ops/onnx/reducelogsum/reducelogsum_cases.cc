// The GPU test cases of ai.onnx::ReduceLogSum, run by opforge_gpu_onnx_tests (tests/op_cases.h).
#include "op_cases.h"

namespace opforge::test::cases {

OPFORGE_BUILTIN_CASES(reducelogsum) {
  add({"ReduceLogSum", {}, {T({4, 5, 6}, 0.1, 2), Vi({1})}, kF, 10});
  add({"ReduceLogSum", A({{"keepdims", int64_t{0}}}), {T({4, 5, 6}, 0.1, 2), Vi({0, 2})}, kF, 10});
  add({"ReduceLogSum", {}, {T({3, 700}, 0.1, 2)}, {F32}, 10, false, "all axes"});
}

}  // namespace opforge::test::cases
