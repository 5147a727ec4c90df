// The GPU test cases of ai.onnx::ReduceSum, run by opforge_gpu_onnx_tests (tests/op_cases.h).
#include "op_cases.h"

namespace opforge::test::cases {

OPFORGE_BUILTIN_CASES(reducesum) {
  add({"ReduceSum", {}, {T({4, 5, 6}), Vi({1})}, kFI, 10});
  add({"ReduceSum", A({{"keepdims", int64_t{0}}}), {T({4, 5, 6}), Vi({0, 2})}, kFI, 10});
  add({"ReduceSum", {}, {T({3, 700})}, {F32}, 10, false, "all axes"});
  add({"ReduceSum",
       A({{"noop_with_empty_axes", int64_t{1}}}),
       {T({4, 5}), V(I64, {0}, {})},
       {F32}});
}

}  // namespace opforge::test::cases
