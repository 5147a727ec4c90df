// The GPU test cases of ai.onnx::SpaceToDepth, run by opforge_gpu_onnx_tests (tests/op_cases.h).
#include "op_cases.h"

namespace opforge::test::cases {

OPFORGE_BUILTIN_CASES(spacetodepth) {
  add({"SpaceToDepth", A({{"blocksize", int64_t{2}}}), {T({2, 3, 6, 4})}, {F32, F16, I32}});
}

}  // namespace opforge::test::cases
