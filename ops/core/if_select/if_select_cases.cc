// The GPU test cases of opforge::IfSelect, run by opforge_gpu_onnx_tests (tests/op_cases.h): each
// condition, branches of one shape and of lengths that differ along the 'axes'.
#include "op_cases.h"

namespace opforge::test::cases {

OPFORGE_BUILTIN_CASES(if_select) {
  for (double c : {0.0, 1.0}) {
    add({"opforge::IfSelect", {}, {V(BOOL, {}, {c}), T({3, 17}), T({3, 17})}, kAll});
    add({"opforge::IfSelect",
         A({{"axes", ints({0})}}),
         {V(BOOL, {1}, {c}), T({5, 4}), T({2, 4})},
         {F32, I64, F16, BOOL}});
    add({"opforge::IfSelect",
         A({{"axes", ints({0, 1})}}),
         {V(BOOL, {}, {c}), T({0, 8}), T({9, 33})},
         {F32, I32},
         1,
         true});
  }
}

}  // namespace opforge::test::cases
