// The GPU test cases of ai.onnx::ReduceLogSumExp, run by opforge_gpu_onnx_tests (tests/op_cases.h).
#include "op_cases.h"

namespace opforge::test::cases {

OPFORGE_BUILTIN_CASES(reducelogsumexp) {
  add({"ReduceLogSumExp", {}, {T({4, 5, 6}, -3, 3), Vi({1})}, kF, 10});
  add({"ReduceLogSumExp",
       A({{"keepdims", int64_t{0}}}),
       {T({4, 5, 6}, -3, 3), Vi({0, 2})},
       kF,
       10});
  add({"ReduceLogSumExp", {}, {T({3, 700}, -3, 3)}, {F32}, 10, false, "all axes"});
}

}  // namespace opforge::test::cases
