// The GPU test cases of ai.onnx::BlackmanWindow, run by opforge_gpu_onnx_tests (tests/op_cases.h).
#include "op_cases.h"

namespace opforge::test::cases {

OPFORGE_BUILTIN_CASES(blackmanwindow) {
  // Output types: FP32 (default), FP16, FP64, INT32 (truncated); periodic and symmetric.
  for (int64_t t : {1, 10, 11, 6})
    for (int64_t p : {0, 1})
      add({"BlackmanWindow",
           A({{"output_datatype", t}, {"periodic", p}}),
           {V(I64, {}, {1000})},
           {F32},
           1,
           false,
           "type " + std::to_string(t) + ", periodic " + std::to_string(p)});
  add({"BlackmanWindow", {}, {V(I32, {}, {7})}, {F32}, 1, false, "INT32 size"});
}

}  // namespace opforge::test::cases
