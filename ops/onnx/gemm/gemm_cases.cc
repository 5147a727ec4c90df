// The GPU test cases of ai.onnx::Gemm, run by opforge_gpu_onnx_tests (tests/op_cases.h).
#include "op_cases.h"

namespace opforge::test::cases {

OPFORGE_BUILTIN_CASES(gemm) {
  add({"Gemm", A({{"transB", int64_t{1}}}), {T({9, 33}), T({17, 33}), T({17})}, kFI, 20});
  add({"Gemm",
       A({{"transA", int64_t{1}}, {"alpha", 0.5}, {"beta", 2.0}}),
       {T({33, 9}), T({33, 17}), T({9, 1})},
       {F32, F16, F64, I32},
       20,
       false,
       "transA, broadcast C"});
  add({"Gemm", {}, {T({9, 33}), T({33, 17})}, {F32, B16}, 20, false, "no C"});
}

}  // namespace opforge::test::cases
