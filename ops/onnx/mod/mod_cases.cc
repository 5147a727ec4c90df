// The GPU test cases of ai.onnx::Mod, run by opforge_gpu_onnx_tests (tests/op_cases.h).
#include "op_cases.h"

namespace opforge::test::cases {

OPFORGE_BUILTIN_CASES(mod) {
  add({"Mod", {}, {T({4, 17}, -50, 50), T({4, 17}, -9, 9, 1)}, {I32, I64, I8, U8}});
  add({"Mod",
       A({{"fmod", int64_t{1}}}),
       {T({4, 17}, -50, 50), T({4, 17}, -9, 9, 1)},
       {F32, F16, F64, I32, I64}});
}

}  // namespace opforge::test::cases
