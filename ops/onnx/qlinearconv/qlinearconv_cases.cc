// The GPU test cases of ai.onnx::QLinearConv, run by opforge_gpu_onnx_tests (tests/op_cases.h).
// The case type is x's (and its zero point's); the scales are FP32, w, y and their zero points
// 8-bit integers of fixed types, B INT32.
#include "op_cases.h"

namespace opforge::test::cases {

OPFORGE_BUILTIN_CASES(qlinearconv) {
  add({"QLinearConv",
       A({{"pads", ints({1, 1, 1, 1})}}),
       {T({2, 8, 9, 10}, 0, 127), R(F32, {}, 0.01, 0.03), T({}, 0, 40),
        R(I8, {16, 8, 3, 3}, -128, 127), R(F32, {16}, 0.002, 0.01), R(I8, {16}, 0, 0),
        R(F32, {}, 0.05, 0.1), R(U8, {}, 100, 150), R(I32, {16}, -2000, 2000)},
       {U8, I8}});
  add({"QLinearConv",
       A({{"strides", ints({2, 2})}, {"group", int64_t{2}}}),
       {T({1, 8, 11, 10}, 0, 127), R(F32, {}, 0.01, 0.03), T({}, 60, 70),
        R(U8, {6, 4, 3, 3}, 0, 255), R(F32, {}, 0.002, 0.01), R(U8, {}, 120, 136),
        R(F32, {}, 0.05, 0.1), R(I8, {}, -10, 10)},
       {U8},
       1,
       false,
       "groups, strides, per-tensor w, no bias, INT8 output"});
  add({"QLinearConv",
       A({{"pads", ints({1, 1, 1, 1})}}),
       {T({2, 16, 9, 8}, 0, 127), R(F32, {}, 0.01, 0.03), T({}, 20, 60),
        R(I8, {32, 16, 3, 3}, -128, 127), R(F32, {32}, 0.002, 0.01), R(I8, {32}, -2, 2),
        R(F32, {}, 0.05, 0.1), R(U8, {}, 100, 150), R(I32, {32}, -2000, 2000)},
       {U8, I8},
       1,
       false,
       "the tensor-core tactic's shapes (cuda.lt_int8), padding at x's zero point"});
}

}  // namespace opforge::test::cases
