// The GPU test cases of ai.onnx::Einsum, run by opforge_gpu_onnx_tests (tests/op_cases.h).
#include "op_cases.h"

namespace opforge::test::cases {

OPFORGE_BUILTIN_CASES(einsum) {
  add({"Einsum",
       A({{"equation", std::string("bij,bjk->bik")}}),
       {T({2, 5, 7}), T({2, 7, 3})},
       kFI,
       20});
  add({"Einsum", A({{"equation", std::string("ii->i")}}), {T({5, 5})}, {F32, I32}});
  add({"Einsum", A({{"equation", std::string("...j,j")}}), {T({2, 3, 4}), T({4})}, {F32, F64}, 20});
}

}  // namespace opforge::test::cases
