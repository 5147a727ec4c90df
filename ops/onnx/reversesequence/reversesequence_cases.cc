// The GPU test cases of ai.onnx::ReverseSequence, run by opforge_gpu_onnx_tests (tests/op_cases.h).
// Data movement: exact.
#include "op_cases.h"

namespace opforge::test::cases {

OPFORGE_BUILTIN_CASES(reversesequence) {
  // Time-major [T, B, ...] (the defaults), lengths from 0 to T.
  add({"ReverseSequence",
       {},
       {T({9, 5, 3, 4}), V(I64, {5}, {0, 9, 4, 1, 7})},
       kAll,
       1,
       false,
       "time major"});
  // Batch-major [B, T] (rank 2), more elements than one wave of blocks.
  add({"ReverseSequence",
       A({{"batch_axis", int64_t{0}}, {"time_axis", int64_t{1}}}),
       {T({6, 70000}), V(I64, {6}, {70000, 1, 0, 35001, 2, 69999})},
       {F32, F16, I8, I64},
       1,
       false,
       "batch major"});
}

}  // namespace opforge::test::cases
