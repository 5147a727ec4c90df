// The GPU test cases of ai.onnx::Compress, run by opforge_gpu_onnx_tests (tests/op_cases.h). Data
// movement: exact.
#include "op_cases.h"

namespace opforge::test::cases {

OPFORGE_BUILTIN_CASES(compress) {
  // Along a middle axis, a condition as long as the axis.
  add({"Compress",
       A({{"axis", int64_t{1}}}),
       {T({3, 37, 5}), R(BOOL, {37}, 0, 1)},
       kAll,
       1,
       false,
       "axis 1"});
  // A negative axis (the last), a condition shorter than the axis.
  add({"Compress",
       A({{"axis", int64_t{-1}}}),
       {T({4, 6, 50}), R(BOOL, {31}, 0, 1)},
       kAll,
       1,
       false,
       "short condition"});
  // No axis: elements of the flattened input; more than one wave of blocks.
  add({"Compress",
       {},
       {T({3, 200, 50}), R(BOOL, {30000}, 0, 1)},
       {F32, F16, I64, I8, BOOL},
       1,
       false,
       "flattened"});
  // Nothing selected; an empty condition.
  add({"Compress",
       A({{"axis", int64_t{0}}}),
       {T({3, 4}), V(BOOL, {3}, {0, 0, 0})},
       {F32},
       1,
       false,
       "none selected"});
  add({"Compress",
       A({{"axis", int64_t{1}}}),
       {T({3, 4}), V(BOOL, {0}, {})},
       {F32},
       1,
       false,
       "empty condition"});
}

}  // namespace opforge::test::cases
