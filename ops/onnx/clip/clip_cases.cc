// The GPU test cases of ai.onnx::Clip, run by opforge_gpu_onnx_tests (tests/op_cases.h).
#include "op_cases.h"

namespace opforge::test::cases {

OPFORGE_BUILTIN_CASES(clip) {
  add({"Clip",
       {},
       {T({4, 33}, -4, 4), V(TT, {}, {-1.5}), V(TT, {}, {2.5})},
       {F32, F16, B16, F64, I32, I64, I8},
       1,
       true});
  add({"Clip", {}, {T({4, 33}, -4, 4), None(), V(TT, {}, {1.0})}, kF});
  add({"Clip", A({{"min", -0.5}}), {T({4, 33}, -4, 4)}, kF, 1, false, "opset < 11 attributes"});
}

}  // namespace opforge::test::cases
