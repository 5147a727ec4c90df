// The GPU test cases of ai.onnx::ScatterElements, run by opforge_gpu_onnx_tests (tests/op_cases.h).
#include "op_cases.h"

namespace opforge::test::cases {

OPFORGE_BUILTIN_CASES(scatterelements) {
  // Valid indices, negative ones included.
  add({"ScatterElements",
       A({{"axis", int64_t{1}}}),
       {T({3, 6}), U(I64, {3, 6}, 6), T({3, 6})},
       kAll});
  for (const char* red : {"add", "max"})
    add({"ScatterElements",
         A({{"axis", int64_t{0}}, {"reduction", std::string(red)}}),
         {T({4, 5}), R(I32, {6, 5}, -4, 3), T({6, 5})},
         {F32, F16, I32, U8},
         10});
}

}  // namespace opforge::test::cases
