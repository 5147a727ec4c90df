// The GPU test cases of ai.onnx::ReduceL2, run by opforge_gpu_onnx_tests (tests/op_cases.h).
#include "op_cases.h"

namespace opforge::test::cases {

OPFORGE_BUILTIN_CASES(reducel2) {
  add({"ReduceL2", {}, {T({4, 5, 6}), Vi({1})}, {F32, F16, F64, I32}, 10});
  add({"ReduceL2",
       A({{"keepdims", int64_t{0}}}),
       {T({4, 5, 6}), Vi({0, 2})},
       {F32, F16, F64, I32},
       10});
  add({"ReduceL2", {}, {T({3, 700})}, {F32}, 10, false, "all axes"});
}

}  // namespace opforge::test::cases
