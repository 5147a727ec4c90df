// The GPU test cases of ai.onnx::Unique, run by opforge_gpu_onnx_tests (tests/op_cases.h). Exact:
// every output is a copy or a count.
#include <cmath>

#include "op_cases.h"

namespace opforge::test::cases {

OPFORGE_BUILTIN_CASES(unique) {
  // Flattened, many repeats (small integer values), sorted and in order of first occurrence.
  add({"Unique", {}, {T({7, 60}, -20, 20)}, kAll, 1, false, "sorted"});
  add({"Unique",
       A({{"sorted", int64_t{0}}}),
       {T({7, 60}, -20, 20)},
       kAll,
       1,
       false,
       "first occurrence"});
  // Slices along an axis: rows of a few small values, so that some repeat.
  add({"Unique",
       A({{"axis", int64_t{1}}}),
       {T({2, 300, 2}, -2, 2)},
       {F32, I64, I8, U8},
       1,
       false,
       "slices, sorted"});
  add({"Unique",
       A({{"axis", int64_t{-3}}, {"sorted", int64_t{0}}}),
       {T({500, 1, 2}, -2, 2)},
       {F32, F16, I32},
       1,
       false,
       "slices, first occurrence"});
  // More slices than cuda.pairwise takes (2^16): cuda.sort alone.
  add({"Unique",
       {},
       {T({3, 40000}, -3000, 3000)},
       {F32, I64},
       1,
       false,
       "120,000 elements, sorted"});
  add({"Unique",
       A({{"sorted", int64_t{0}}}),
       {T({3, 40000}, -3000, 3000)},
       {F32, I32},
       1,
       false,
       "120,000 elements, first occurrence"});
  // NaN equals NaN and sorts last; -0 equals +0.
  add({"Unique",
       {},
       {V(F32, {8}, {2.0, std::nan(""), -0.0, 1.0, std::nan(""), 0.0, 2.0, -1.0})},
       {F32},
       1,
       false,
       "NaN and signed zero"});
}

}  // namespace opforge::test::cases
