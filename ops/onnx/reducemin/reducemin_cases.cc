// The GPU test cases of ai.onnx::ReduceMin, run by opforge_gpu_onnx_tests (tests/op_cases.h).
#include "op_cases.h"

namespace opforge::test::cases {

OPFORGE_BUILTIN_CASES(reducemin) {
  add({"ReduceMin", {}, {T({4, 5, 6}), Vi({1})}, {F32, F16, F64, I32, U8}, 10});
  add({"ReduceMin",
       A({{"keepdims", int64_t{0}}}),
       {T({4, 5, 6}), Vi({0, 2})},
       {F32, F16, F64, I32, U8},
       10});
  add({"ReduceMin", {}, {T({3, 700})}, {F32}, 10, false, "all axes"});
}

}  // namespace opforge::test::cases
