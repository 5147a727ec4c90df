// The GPU test cases of ai.onnx::MatMulInteger, run by opforge_gpu_onnx_tests (tests/op_cases.h).
// The case type is A's (and its zero point's); B is INT8 or UINT8 of a fixed type; Y is INT32.
#include "op_cases.h"

namespace opforge::test::cases {

OPFORGE_BUILTIN_CASES(matmulinteger) {
  add({"MatMulInteger",
       {},
       {T({19, 70}, 0, 120), R(U8, {70, 33}, 0, 255), T({}, 0, 60), R(U8, {}, 0, 255)},
       {U8, I8}});
  add({"MatMulInteger",
       {},
       {T({2, 3, 9, 40}, 0, 127), R(I8, {40, 17}, -128, 127), T({9}, 0, 30), R(I8, {17}, -20, 20)},
       {U8, I8},
       1,
       false,
       "batched A, B shared; per-row and per-column zero points"});
  // cuda.lt_int8's shapes (K and N multiples of 4, B shared: one GEMM), a UINT8 B shifted.
  add({"MatMulInteger",
       {},
       {T({2, 32, 128}, 0, 127), R(U8, {128, 96}, 0, 255), T({32}, 0, 100), R(U8, {96}, 100, 150)},
       {U8, I8},
       1,
       false,
       "the tensor-core tactic's shapes, per-row and per-column zero points"});
  add({"MatMulInteger",
       {},
       {T({3, 1, 5, 24}, 0, 127), R(I8, {4, 24, 6}, -128, 127)},
       {I8},
       1,
       false,
       "broadcast batches, no zero points"});
}

}  // namespace opforge::test::cases
