// The GPU test cases of ai.onnx::CumProd, run by opforge_gpu_onnx_tests (tests/op_cases.h).
#include "op_cases.h"

namespace opforge::test::cases {

OPFORGE_BUILTIN_CASES(cumprod) {
  add({"CumProd", {}, {T({3, 5, 9}, 0.5, 1.5), V(I64, {}, {2})}, {F32, F64, I32}, 10});
  add({"CumProd",
       A({{"reverse", int64_t{1}}}),
       {T({4, 6}, 0.5, 1.5), V(I64, {}, {0})},
       {F32, F16},
       10});
}

}  // namespace opforge::test::cases
