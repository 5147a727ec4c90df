// The GPU test cases of ai.onnx::DequantizeLinear, run by opforge_gpu_onnx_tests
// (tests/op_cases.h). The case type is the scale's (and the output's); x and the zero point are
// integers of a fixed type.
#include "op_cases.h"

namespace opforge::test::cases {

OPFORGE_BUILTIN_CASES(dequantizelinear) {
  add({"DequantizeLinear", {}, {R(U8, {4, 37}, 0, 255), T({}, 0.1, 0.3), R(U8, {}, 0, 255)}, kF});
  add({"DequantizeLinear", {}, {R(I8, {4, 37}, -128, 127), T({}, 0.1, 0.3)}, kF});
  add({"DequantizeLinear", {}, {R(I32, {33}, -100000, 100000), T({}, 0.001, 0.01)}, kF});
  add({"DequantizeLinear",
       {},
       {R(I16, {2, 5, 7}, -3000, 3000), T({5}, 0.01, 0.1), R(I16, {5}, -20, 20)},
       kF});
  add({"DequantizeLinear",
       A({{"axis", int64_t{1}}, {"block_size", int64_t{3}}}),
       {R(U16, {4, 8}, 0, 65535), T({4, 3}, 0.01, 0.1), R(U16, {4, 3}, 0, 65535)},
       {F32, F16, B16, F64}});
}

}  // namespace opforge::test::cases
