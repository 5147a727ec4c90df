// The GPU test cases of ai.onnx::ReduceProd, run by opforge_gpu_onnx_tests (tests/op_cases.h).
#include "op_cases.h"

namespace opforge::test::cases {

OPFORGE_BUILTIN_CASES(reduceprod) {
  add({"ReduceProd", {}, {T({4, 5, 6}, 0.8, 1.2), Vi({1})}, {F32, F64, I32}, 10});
  add({"ReduceProd",
       A({{"keepdims", int64_t{0}}}),
       {T({4, 5, 6}, 0.8, 1.2), Vi({0, 2})},
       {F32, F64, I32},
       10});
  add({"ReduceProd", {}, {T({3, 700}, 0.8, 1.2)}, {F32}, 10, false, "all axes"});
}

}  // namespace opforge::test::cases
