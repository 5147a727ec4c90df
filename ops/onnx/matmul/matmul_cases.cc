// The GPU test cases of ai.onnx::MatMul, run by opforge_gpu_onnx_tests (tests/op_cases.h).
#include "op_cases.h"

namespace opforge::test::cases {

OPFORGE_BUILTIN_CASES(matmul) {
  add({"MatMul", {}, {T({3, 17, 29}), T({29, 13})}, kFI, 20});
  add({"MatMul",
       {},
       {T({2, 1, 8, 16}), T({3, 16, 8})},
       {F32, F16, B16, F64},
       20,
       false,
       "broadcast batch"});
  add({"MatMul", {}, {T({16}), T({4, 16, 3})}, {F32, I64}, 20, false, "1-D A"});
  add({"MatMul", {}, {T({5, 16}), T({16})}, {F32, F16}, 20, false, "1-D B"});
  add({"MatMul", {}, {T({64, 128}), T({128, 96})}, {F32, F16, B16}, 20});
}

}  // namespace opforge::test::cases
