// The GPU test cases of ai.onnx::Split, run by opforge_gpu_onnx_tests (tests/op_cases.h).
#include "op_cases.h"

namespace opforge::test::cases {

OPFORGE_BUILTIN_CASES(split) {
  add({"Split",
       A({{"axis", int64_t{1}}, {"_onnx_num_outputs", int64_t{3}}}),
       {T({2, 9, 4})},
       kAll,
       1,
       true});
  add({"Split", A({{"axis", int64_t{0}}}), {T({7, 3}), Vi({2, 5})}, {F32, I64}});
}

}  // namespace opforge::test::cases
