// The GPU test cases of ai.onnx::Sum, run by opforge_gpu_onnx_tests (tests/op_cases.h).
#include "op_cases.h"

namespace opforge::test::cases {

OPFORGE_BUILTIN_CASES(sum) {
  add({"Sum", {}, {T({3, 17}), T({3, 17}), T({17})}, kFI});
  add({"Sum", {}, {T({3, 17})}, {F32, I32}, 1, false, "one input"});
  std::vector<In> many;
  for (int i = 0; i < 11; ++i) many.push_back(T({2, 9}));
  add({"Sum", {}, many, {F32, F16, I32}, 1, false, "more inputs than one pass takes"});
}

}  // namespace opforge::test::cases
