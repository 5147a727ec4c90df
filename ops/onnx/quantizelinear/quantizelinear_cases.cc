// The GPU test cases of ai.onnx::QuantizeLinear, run by opforge_gpu_onnx_tests (tests/op_cases.h).
#include "op_cases.h"

namespace opforge::test::cases {

OPFORGE_BUILTIN_CASES(quantizelinear) {
  // Per-tensor, saturating both ways (x / scale reaches +-400).
  add({"QuantizeLinear", {}, {T({4, 37}, -40, 40), T({}, 0.1, 0.3), R(U8, {}, 0, 255)}, kF});
  add({"QuantizeLinear", {}, {T({4, 37}, -40, 40), T({}, 0.1, 0.3), R(I8, {}, -128, 127)}, kF});
  add({"QuantizeLinear", {}, {T({3, 9}, -4, 4), T({}, 0.02, 0.05), R(I16, {}, -99, 99)}, kF});
  // No zero point: UINT8.
  add({"QuantizeLinear", {}, {T({65}, -2, 60), T({}, 0.1, 0.2)}, {F32, F16}});
  // Per-axis along axis 1 and axis 0; blocked along the last axis (a partial last block).
  add({"QuantizeLinear", {}, {T({2, 5, 7}, -9, 9), T({5}, 0.01, 0.1), R(I8, {5}, -20, 20)}, kF});
  add({"QuantizeLinear",
       A({{"axis", int64_t{0}}}),
       {T({6, 11}, -9, 9), T({6}, 0.01, 0.1), R(U16, {6}, 0, 60000)},
       {F32, F64}});
  add({"QuantizeLinear",
       A({{"axis", int64_t{-1}}, {"block_size", int64_t{4}}}),
       {T({3, 10}, -9, 9), T({3, 3}, 0.01, 0.1), R(U8, {3, 3}, 0, 255)},
       {F32, F16, B16}});
}

}  // namespace opforge::test::cases
