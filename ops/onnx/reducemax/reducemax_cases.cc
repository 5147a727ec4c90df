// The GPU test cases of ai.onnx::ReduceMax, run by opforge_gpu_onnx_tests (tests/op_cases.h).
#include "op_cases.h"

namespace opforge::test::cases {

OPFORGE_BUILTIN_CASES(reducemax) {
  add({"ReduceMax", {}, {T({4, 5, 6}), Vi({1})}, {F32, F16, F64, I32, U8}, 10});
  add({"ReduceMax",
       A({{"keepdims", int64_t{0}}}),
       {T({4, 5, 6}), Vi({0, 2})},
       {F32, F16, F64, I32, U8},
       10});
  add({"ReduceMax", {}, {T({3, 700})}, {F32}, 10, false, "all axes"});
  add({"ReduceMax", {}, {T({4, 5}), Vi({-1})}, {BOOL}});
}

}  // namespace opforge::test::cases
