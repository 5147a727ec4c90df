// The GPU test cases of opforge::Roll, run by opforge_gpu_onnx_tests (tests/op_cases.h): Swin's
// window shift (two axes before a channel block of 16-byte units), a block of odd bytes, the last
// axis rolled (one-element units), shifts beyond the size and negative, a repeated axis, an empty
// tensor and a scalar-like tensor.
#include "op_cases.h"

namespace opforge::test::cases {

OPFORGE_BUILTIN_CASES(roll) {
  add({"opforge::Roll",
       A({{"shifts", ints({-3, -3})}, {"axes", ints({1, 2})}}),
       {T({2, 14, 14, 96})},
       kAll,
       1,
       true});
  add({"opforge::Roll",
       A({{"shifts", ints({3, 3})}, {"axes", ints({1, 2})}}),
       {T({2, 7, 7, 48})},
       {F16, F32, B16}});
  add({"opforge::Roll",
       A({{"shifts", ints({1})}, {"axes", ints({1})}}),
       {T({3, 5, 7})},
       kAll,
       1,
       true});
  add({"opforge::Roll", A({{"shifts", ints({2})}, {"axes", ints({-1})}}), {T({4, 33})}, kAll});
  add({"opforge::Roll",
       A({{"shifts", ints({-11, 25})}, {"axes", ints({0, 2})}}),
       {T({5, 1, 6, 3})},
       {F32, I64, U8}});
  add({"opforge::Roll",
       A({{"shifts", ints({2, 3})}, {"axes", ints({1, 1})}}),
       {T({2, 9, 4})},
       {F32, F16}});
  add({"opforge::Roll", A({{"shifts", ints({0})}, {"axes", ints({0})}}), {T({6, 10})}, {F32}});
  add({"opforge::Roll", A({{"shifts", ints({1})}, {"axes", ints({0})}}), {T({0, 10})}, {F32}});
  add({"opforge::Roll", A({{"shifts", ints({4})}, {"axes", ints({0})}}), {T({1})}, {F32, BOOL}});
}

}  // namespace opforge::test::cases
