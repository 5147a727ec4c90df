// The GPU test cases of ai.onnx::Concat, run by opforge_gpu_onnx_tests (tests/op_cases.h).
#include "op_cases.h"

namespace opforge::test::cases {

OPFORGE_BUILTIN_CASES(concat) {
  add({"Concat",
       A({{"axis", int64_t{1}}}),
       {T({2, 3, 5}), T({2, 1, 5}), T({2, 4, 5})},
       kAll,
       1,
       true});
  add({"Concat", A({{"axis", int64_t{-1}}}), {T({2, 8}), T({2, 8})}, {F32, F16, I64}, 1, true});
  std::vector<In> parts;
  for (int i = 0; i < 18; ++i) parts.push_back(T({2, 1 + i % 3}));
  add({"Concat", A({{"axis", int64_t{1}}}), parts, {F32, I8}, 1, false, "more than 16 inputs"});
}

}  // namespace opforge::test::cases
