// The GPU test cases of ai.onnx::ReduceSumSquare, run by opforge_gpu_onnx_tests (tests/op_cases.h).
#include "op_cases.h"

namespace opforge::test::cases {

OPFORGE_BUILTIN_CASES(reducesumsquare) {
  add({"ReduceSumSquare", {}, {T({4, 5, 6}), Vi({1})}, {F32, F16, F64, I32}, 10});
  add({"ReduceSumSquare",
       A({{"keepdims", int64_t{0}}}),
       {T({4, 5, 6}), Vi({0, 2})},
       {F32, F16, F64, I32},
       10});
  add({"ReduceSumSquare", {}, {T({3, 700})}, {F32}, 10, false, "all axes"});
}

}  // namespace opforge::test::cases
