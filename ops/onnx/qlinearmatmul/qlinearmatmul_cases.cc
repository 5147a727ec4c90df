// The GPU test cases of ai.onnx::QLinearMatMul, run by opforge_gpu_onnx_tests (tests/op_cases.h).
// The case type is the scales'; a, b, y and the zero points are 8-bit integers of fixed types.
#include "op_cases.h"

namespace opforge::test::cases {

OPFORGE_BUILTIN_CASES(qlinearmatmul) {
  add({"QLinearMatMul",
       {},
       {R(U8, {21, 64}, 0, 255), T({}, 0.01, 0.03, 0), R(U8, {}, 100, 150),
        R(I8, {64, 35}, -128, 127), T({}, 0.005, 0.02, 0), R(I8, {}, -5, 5), T({}, 0.5, 1.5, 0),
        R(U8, {}, 100, 150)},
       {F32, F16, B16}});
  add({"QLinearMatMul",
       {},
       {R(I8, {2, 7, 48}, -128, 127), T({7}, 0.01, 0.03, 0), R(I8, {7}, -10, 10),
        R(U8, {48, 19}, 0, 255), T({19}, 0.005, 0.02, 0), R(U8, {19}, 120, 136), T({}, 0.2, 0.4, 0),
        R(I8, {}, -10, 10)},
       {F32, F16},
       1,
       false,
       "batched a, b shared; per-row a and per-column b parameters; INT8 output"});
  add({"QLinearMatMul",
       {},
       {R(U8, {2, 32, 128}, 0, 255), T({32}, 0.01, 0.03, 0), R(U8, {32}, 100, 150),
        R(I8, {128, 64}, -128, 127), T({64}, 0.005, 0.02, 0), R(I8, {64}, -3, 3),
        T({}, 0.5, 1.5, 0), R(I8, {}, -5, 5)},
       {F32, F16},
       1,
       false,
       "the tensor-core tactic's shapes (cuda.lt_int8), UINT8 a shifted, per-row / per-column"});
}

}  // namespace opforge::test::cases
