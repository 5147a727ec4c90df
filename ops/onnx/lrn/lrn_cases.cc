// The GPU test cases of ai.onnx::LRN, run by opforge_gpu_onnx_tests (tests/op_cases.h).
#include "op_cases.h"

namespace opforge::test::cases {

OPFORGE_BUILTIN_CASES(lrn) {
  add({"LRN", A({{"size", int64_t{3}}}), {T({2, 7, 5, 6})}, kF, 10});
  // An even window (one more channel after than before), a window wider than C, large alpha.
  add({"LRN",
       A({{"size", int64_t{4}}, {"alpha", 0.5}, {"beta", 0.6}, {"bias", 2.0}}),
       {T({3, 5, 9})},
       kF,
       10});
  add({"LRN", A({{"size", int64_t{9}}, {"alpha", 0.1}}), {T({1, 4, 3, 3})}, {F32, F64}, 10});
}

}  // namespace opforge::test::cases
