// The GPU test cases of ai.onnx::Scatter, run by opforge_gpu_onnx_tests (tests/op_cases.h). Scatter
// imports as ai.onnx::ScatterElements (scatter.cc), so these run ScatterElements' tactics through
// the alias. Indices never repeat along the scatter axis within a line (the parallel tactic keeps
// an arbitrary one of duplicate updates); negative ones count from the end.
#include "op_cases.h"

namespace opforge::test::cases {

OPFORGE_BUILTIN_CASES(scatter) {
  // Axis 1, unique along each row.
  add({"Scatter",
       A({{"axis", int64_t{1}}}),
       {T({3, 6}), U(I64, {3, 6}, 6), T({3, 6})},
       kAll,
       1,
       true});
  // Axis 0 (the default): every column of the indices a distinct set of rows, one negative.
  add({"Scatter",
       {},
       {T({4, 5}), V(I32, {3, 4}, {0, 1, 2, 3, 1, 2, 3, 0, -2, -1, 0, 1}), T({3, 4})},
       kAll,
       1,
       true});
  // Rank 3, the last axis, indices smaller than data on the other axes.
  add({"Scatter",
       A({{"axis", int64_t{-1}}}),
       {T({2, 4, 7}), U(I32, {2, 3, 4}, 7), T({2, 3, 4})},
       kAll,
       1,
       true});
}

}  // namespace opforge::test::cases
