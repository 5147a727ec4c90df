// The GPU test cases of ai.onnx::Transpose, run by opforge_gpu_onnx_tests (tests/op_cases.h).
#include "op_cases.h"

namespace opforge::test::cases {

OPFORGE_BUILTIN_CASES(transpose) {
  add({"Transpose",
       A({{"perm", ints({0, 2, 1})}}),
       {T({3, 37, 45})},
       {F32, F16, F64, I8, BOOL},
       1,
       true});
  add({"Transpose",
       A({{"perm", ints({2, 0, 1, 3})}}),
       {T({3, 4, 5, 8})},
       {F32, F16, I64},
       1,
       true});
  add({"Transpose", {}, {T({2, 3, 4, 5})}, {F32, U8}});
  add({"Transpose", A({{"perm", ints({1, 0, 2})}}), {T({2, 1, 7})}, {F32}});
  // patch_merge's permutation (Swin's patch merging): [N, H/2, 2, W/2, 2, C] with C whole.
  add({"Transpose",
       A({{"perm", ints({0, 1, 3, 4, 2, 5})}}),
       {T({2, 3, 2, 4, 2, 16})},
       {F32, F16, U8},
       1,
       false,
       "rank 6, the innermost axis kept (patch_merge)"});
}

}  // namespace opforge::test::cases
