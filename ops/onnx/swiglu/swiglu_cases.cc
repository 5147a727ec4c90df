// The GPU test cases of ai.onnx::SwiGLU, run by opforge_gpu_onnx_tests (tests/op_cases.h).
// Elementwise in double: factor 1.
#include "op_cases.h"

namespace opforge::test::cases {

OPFORGE_BUILTIN_CASES(swiglu) {
  add({"SwiGLU", {}, {T({5, 67}, -9, 9), T({5, 67})}, kF, 1, true});
  add({"SwiGLU",
       A({{"alpha", 1.702}}),
       {T({3, 1000}, -40, 40), T({3, 1000})},
       kF,
       1,
       true,
       "alpha, large gates"});
}

}  // namespace opforge::test::cases
