// The GPU test cases of ai.onnx::AffineGrid, run by opforge_gpu_onnx_tests (tests/op_cases.h). Sums
// of three or four products in double: factor 1.
#include "op_cases.h"

namespace opforge::test::cases {

OPFORGE_BUILTIN_CASES(affinegrid) {
  add({"AffineGrid", {}, {T({3, 2, 3}), Vi({3, 5, 17, 23})}, kF, 1, false, "2-D"});
  add({"AffineGrid",
       A({{"align_corners", int64_t{1}}}),
       {T({2, 3, 4}), Vi({2, 1, 5, 1, 9})},
       kF,
       1,
       false,
       "3-D, align_corners, an axis of 1"});
}

}  // namespace opforge::test::cases
