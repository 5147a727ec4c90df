// The GPU test cases of ai.onnx::Col2Im, run by opforge_gpu_onnx_tests (tests/op_cases.h). The
// tactic sums each image element's contributions in the reference's order, in double: factor 1.
#include "op_cases.h"

namespace opforge::test::cases {

OPFORGE_BUILTIN_CASES(col2im) {
  // 2-D, overlapping blocks: 3x3 blocks, stride 1, pads 1: L = 7 * 9 = 63.
  add({"Col2Im",
       A({{"pads", ints({1, 1, 1, 1})}}),
       {T({2, 4 * 9, 63}), Vi({7, 9}), Vi({3, 3})},
       kF,
       1,
       false,
       "overlapping"});
  // Strides and dilations (positions never reached stay 0), uneven pads.
  add({"Col2Im",
       A({{"strides", ints({2, 3})}, {"dilations", ints({2, 1})}, {"pads", ints({0, 2, 1, 0})}}),
       {T({1, 3 * 4, 5 * 4}), Vi({10, 11}), Vi({2, 2})},
       kF,
       1,
       false,
       "strides, dilations, pads"});
  // 3-D blocks.
  add({"Col2Im",
       {},
       {T({1, 2 * 8, 3 * 2 * 4}), Vi({4, 3, 5}), Vi({2, 2, 2})},
       kF,
       1,
       false,
       "3-D"});
}

}  // namespace opforge::test::cases
