// The GPU test cases of ai.onnx::TopK, run by opforge_gpu_onnx_tests (tests/op_cases.h).
#include "op_cases.h"

namespace opforge::test::cases {

OPFORGE_BUILTIN_CASES(topk) {
  add({"TopK", {}, {T({3, 37}), Vi({5})}, {F32, F16, F64, I32, I64, U8}});
  add({"TopK",
       A({{"axis", int64_t{0}}, {"largest", int64_t{0}}}),
       {T({40, 3, 2}), Vi({7})},
       {F32, I32}});
}

}  // namespace opforge::test::cases
