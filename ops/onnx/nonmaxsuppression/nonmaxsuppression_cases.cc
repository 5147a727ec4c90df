// The GPU test cases of ai.onnx::NonMaxSuppression, run by opforge_gpu_onnx_tests
// (tests/op_cases.h). The selected indices are exact.
#include "op_cases.h"

namespace opforge::test::cases {

OPFORGE_BUILTIN_CASES(nonmaxsuppression) {
  // Corners in either order, many overlaps; thresholds as [1] tensors.
  add({"NonMaxSuppression",
       {},
       {R(F32, {2, 60, 4}, 0, 10), R(F32, {2, 3, 60}, 0, 1), Vi({20}), V(F32, {1}, {0.3}),
        V(F32, {1}, {0.2})},
       {F32},
       1,
       false,
       "corner boxes"});
  // Center boxes (some of negative width: never suppressed), no score threshold, max above the
  // box count, scalars of rank 0, more lines than one wave of blocks would cover.
  add({"NonMaxSuppression",
       A({{"center_point_box", int64_t{1}}}),
       {R(F32, {3, 400, 4}, -1, 8), R(F32, {3, 7, 400}, -1, 1), V(I64, {}, {1000}),
        V(F32, {}, {0.45}), None()},
       {F32},
       1,
       false,
       "center boxes"});
  // Equal scores (the lower box index first) and a score threshold equal to some scores (strict).
  add({"NonMaxSuppression",
       {},
       {V(F32, {1, 6, 4}, {0, 0,  1, 1,  0, 0.1,  1, 1.1,  0, -0.1, 1, 0.9,
                           0, 10, 1, 11, 0, 10.1, 1, 11.1, 0, 100,  1, 101}),
        V(F32, {1, 2, 6}, {0.5, 0.5, 0.5, 0.9, 0.9, 0.3, 0.2, 0.7, 0.7, 0.2, 0.7, 0.2}), Vi({4}),
        V(F32, {1}, {0.5}), V(F32, {1}, {0.2})},
       {F32},
       1,
       false,
       "ties"});
  // No boxes: an empty selection.
  add({"NonMaxSuppression",
       {},
       {R(F32, {2, 0, 4}, 0, 1), R(F32, {2, 3, 0}, 0, 1), Vi({5}), V(F32, {1}, {0.5}), None()},
       {F32},
       1,
       false,
       "no boxes"});
}

}  // namespace opforge::test::cases
