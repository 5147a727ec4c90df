// The GPU test cases of ai.onnx::CumSum, run by opforge_gpu_onnx_tests (tests/op_cases.h).
#include "op_cases.h"

namespace opforge::test::cases {

OPFORGE_BUILTIN_CASES(cumsum) {
  add({"CumSum", {}, {T({3, 5, 9}), V(I64, {}, {1})}, kFI, 10});
  add({"CumSum",
       A({{"exclusive", int64_t{1}}, {"reverse", int64_t{1}}}),
       {T({2, 1500}), V(I32, {}, {-1})},
       {F32, F64, I64},
       10});
}

}  // namespace opforge::test::cases
