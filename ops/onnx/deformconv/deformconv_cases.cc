// The GPU test cases of ai.onnx::DeformConv, run by opforge_gpu_onnx_tests (tests/op_cases.h). The
// tactic sums in double in the reference's order; factor 1.
#include "op_cases.h"

namespace opforge::test::cases {

OPFORGE_BUILTIN_CASES(deformconv) {
  // Offsets up to +-3 pixels (some samples fall outside), mask and bias, pads.
  add({"DeformConv",
       A({{"pads", ints({1, 1, 1, 1})}}),
       {T({2, 4, 9, 11}), T({6, 4, 3, 3}), T({2, 18, 9, 11}, -3, 3), T({6}),
        T({2, 9, 9, 11}, 0, 1)},
       kF,
       1,
       false,
       "mask, bias, pads"});
  // Groups, offset groups, strides and dilations, no bias or mask.
  add({"DeformConv",
       A({{"group", int64_t{2}},
          {"offset_group", int64_t{2}},
          {"strides", ints({2, 1})},
          {"dilations", ints({1, 2})}}),
       {T({1, 4, 12, 10}), T({4, 2, 2, 3}), T({1, 2 * 2 * 6, 6, 6}, -2, 2), None(), None()},
       kF,
       1,
       false,
       "groups, offset groups, strides, dilations"});
}

}  // namespace opforge::test::cases
