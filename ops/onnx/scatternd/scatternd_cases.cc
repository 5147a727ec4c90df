// The GPU test cases of ai.onnx::ScatterND, run by opforge_gpu_onnx_tests (tests/op_cases.h).
#include "op_cases.h"

namespace opforge::test::cases {

OPFORGE_BUILTIN_CASES(scatternd) {
  // Valid indices, negative ones included.
  add({"ScatterND", {}, {T({8, 5}), U(I64, {4, 1}, 8), T({4, 5})}, kAll});
  for (const char* red : {"add", "mul", "max", "min"})
    add({"ScatterND",
         A({{"reduction", std::string(red)}}),
         {T({6, 3}), R(I64, {5, 1}, -6, 5), T({5, 3})},
         {F32, F64, I32, I64},
         10});
}

}  // namespace opforge::test::cases
