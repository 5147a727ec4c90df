// The GPU test cases of ai.onnx::Det, run by opforge_gpu_onnx_tests (tests/op_cases.h). Both
// tactics make the reference's operations in the reference's order in double (det.h; no FMA
// contraction on the device) and round once: factor 1. Value ranges keep the determinants well
// inside FP16's range (E[det^2] = M! E[x^2]^M for independent entries).
#include "op_cases.h"

namespace opforge::test::cases {

OPFORGE_BUILTIN_CASES(det) {
  add({"Det", {}, {T({4, 3, 3})}, kF, 1, false, "batch of 3x3"});
  add({"Det", {}, {T({2, 3, 2, 2})}, kF, 1, false, "two batch dims, 2x2"});
  add({"Det", {}, {T({2, 2})}, kF, 1, false, "2-D input: scalar output"});
  add({"Det", {}, {T({6, 1, 1})}, kF, 1, false, "1x1"});
  add({"Det", {}, {T({5, 8, 8}, -1, 1)}, kF, 1, false, "8x8: the thread tactic's largest"});
  add({"Det", {}, {T({3, 9, 9}, -1, 1)}, kF, 1, false, "9x9: the block tactic only"});
  add({"Det", {}, {T({2, 16, 16}, -1, 1)}, kF, 1, false, "16x16"});
  add({"Det", {}, {T({2, 40, 40}, -0.45, 0.45)}, kF, 1, false, "40x40: pivots over two warps"});
  add({"Det", {}, {T({2, 70, 70}, -0.33, 0.33)}, kF, 1, false, "70x70: matrices in the workspace"});
  add({"Det", {}, {T({3, 0, 0})}, kF, 1, false, "0x0 matrices: determinant 1"});
  add({"Det", {}, {T({0, 4, 4})}, kF, 1, false, "no matrices"});
  // Exact inputs: a singular matrix (0, not NaN), a cyclic permutation (pivoting, +1), a swap
  // (-1), a zero matrix, and one that needs a row exchange to be triangular (-24).
  add({"Det",
       {},
       {V(TT, {5, 3, 3}, {1, 2, 3, 2, 4, 6, 1, 0, 1,  //
                          0, 1, 0, 0, 0, 1, 1, 0, 0,  //
                          0, 1, 0, 1, 0, 0, 0, 0, 1,  //
                          0, 0, 0, 0, 0, 0, 0, 0, 0,  //
                          0, 0, 2, 0, 3, 1, 4, 1, 1})},
       kF,
       1,
       false,
       "singular, permutations, zero"});
}

}  // namespace opforge::test::cases
