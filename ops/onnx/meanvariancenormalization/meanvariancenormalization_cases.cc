// The GPU test cases of ai.onnx::MeanVarianceNormalization, run by opforge_gpu_onnx_tests
// (tests/op_cases.h).
#include "op_cases.h"

namespace opforge::test::cases {

OPFORGE_BUILTIN_CASES(meanvariancenormalization) {
  add({"MeanVarianceNormalization", {}, {T({3, 4, 5, 6})}, kF, 10});
  add({"MeanVarianceNormalization",
       A({{"axes", std::vector<int64_t>{1, 3}}}),
       {T({2, 7, 3, 9})},
       kF,
       10});
  add({"MeanVarianceNormalization",
       A({{"axes", std::vector<int64_t>{-1}}}),
       {T({5, 300})},
       kF,
       10});
}

}  // namespace opforge::test::cases
