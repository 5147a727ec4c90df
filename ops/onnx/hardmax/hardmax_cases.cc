// The GPU test cases of ai.onnx::Hardmax, run by opforge_gpu_onnx_tests (tests/op_cases.h).
#include "op_cases.h"

namespace opforge::test::cases {

OPFORGE_BUILTIN_CASES(hardmax) {
  add({"Hardmax", {}, {T({3, 4, 37}, -5, 5)}, kF, 10});
  add({"Hardmax", A({{"axis", int64_t{1}}}), {T({3, 40, 6}, -5, 5)}, kF, 10});
  add({"Hardmax", {}, {T({2, 3000}, -5, 5)}, {F32, F16}, 10});
  add({"Hardmax",
       A({{"axis", int64_t{1}}, {"_onnx_opset", int64_t{11}}}),
       {T({2, 3, 5}, -5, 5)},
       {F32},
       10,
       false,
       "opset 11 flattening"});
}

}  // namespace opforge::test::cases
