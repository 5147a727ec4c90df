// The GPU test cases of ai.onnx::GlobalAveragePool, run by opforge_gpu_onnx_tests
// (tests/op_cases.h).
#include "op_cases.h"

namespace opforge::test::cases {

OPFORGE_BUILTIN_CASES(globalaveragepool) {
  add({"GlobalAveragePool", {}, {T({2, 3, 7, 9})}, kF, 10});
  // Channels-last (cuda.hwc): 16-byte channel groups; batch 1 with S split over blocks; 3-D.
  add({"GlobalAveragePool", {}, {T({2, 64, 9, 7})}, kF, 10, true});
  add({"GlobalAveragePool", {}, {T({1, 16, 48, 40})}, kF, 10});
  add({"GlobalAveragePool", {}, {T({3, 5, 11})}, kF, 10});
}

}  // namespace opforge::test::cases
