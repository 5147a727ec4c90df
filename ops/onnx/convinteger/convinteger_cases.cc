// The GPU test cases of ai.onnx::ConvInteger, run by opforge_gpu_onnx_tests (tests/op_cases.h).
// The case type is x's (and its zero point's); w is of a fixed 8-bit type; y is INT32.
#include "op_cases.h"

namespace opforge::test::cases {

OPFORGE_BUILTIN_CASES(convinteger) {
  add({"ConvInteger",
       A({{"pads", ints({1, 1, 1, 1})}}),
       {T({2, 8, 9, 10}, 0, 127), R(I8, {16, 8, 3, 3}, -128, 127), T({}, 0, 40),
        R(I8, {16}, -10, 10)},
       {U8, I8}});
  add({"ConvInteger",
       A({{"strides", ints({2, 2})}, {"group", int64_t{2}}, {"dilations", ints({2, 1})}}),
       {T({1, 8, 11, 10}, 0, 127), R(U8, {6, 4, 3, 3}, 0, 255)},
       {U8},
       1,
       false,
       "groups, strides, dilations, no zero points"});
  // cuda.lt_int8's shapes (group 1, C x taps and M multiples of 4), padding at the zero point.
  add({"ConvInteger",
       A({{"pads", ints({1, 1, 1, 1})}, {"strides", ints({2, 1})}}),
       {T({2, 16, 9, 8}, 0, 127), R(U8, {32, 16, 3, 3}, 0, 255), T({}, 0, 90),
        R(U8, {32}, 100, 150)},
       {U8, I8},
       1,
       false,
       "the tensor-core tactic's shapes"});
}

}  // namespace opforge::test::cases
