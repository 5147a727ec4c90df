// The GPU test cases of ai.onnx::DynamicQuantizeLinear, run by opforge_gpu_onnx_tests
// (tests/op_cases.h). Min, max and FP32 rounding as the reference: exact.
#include "op_cases.h"

namespace opforge::test::cases {

OPFORGE_BUILTIN_CASES(dynamicquantizelinear) {
  // Mixed signs, many blocks of partials.
  add({"DynamicQuantizeLinear", {}, {T({600, 1000}, -3, 7)}, {F32}, 1, false, "mixed signs"});
  // All positive (lo = 0), all negative (hi = 0), a small tensor.
  add({"DynamicQuantizeLinear", {}, {R(F32, {1000}, 0.5, 9)}, {F32}, 1, false, "positive"});
  add({"DynamicQuantizeLinear", {}, {R(F32, {7}, -9, -0.5)}, {F32}, 1, false, "negative"});
}

}  // namespace opforge::test::cases
