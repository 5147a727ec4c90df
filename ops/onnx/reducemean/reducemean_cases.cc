// The GPU test cases of ai.onnx::ReduceMean, run by opforge_gpu_onnx_tests (tests/op_cases.h).
#include "op_cases.h"

namespace opforge::test::cases {

OPFORGE_BUILTIN_CASES(reducemean) {
  add({"ReduceMean", {}, {T({4, 5, 6}), Vi({1})}, kFI, 10});
  add({"ReduceMean", A({{"keepdims", int64_t{0}}}), {T({4, 5, 6}), Vi({0, 2})}, kFI, 10});
  add({"ReduceMean", {}, {T({3, 700})}, {F32}, 10, false, "all axes"});
  add({"ReduceMean",
       A({{"axes", ints({1})}, {"keepdims", int64_t{0}}}),
       {T({4, 5, 6})},
       {F32},
       10,
       false,
       "axes attribute"});
}

}  // namespace opforge::test::cases
