// The GPU test cases of opforge::FusedMatMul, run by opforge_gpu_onnx_tests (tests/op_cases.h).
#include "op_cases.h"

namespace opforge::test::cases {

OPFORGE_BUILTIN_CASES(fused_gemm) {
  add({"opforge::FusedMatMul",
       A({{"activation", std::string("relu")}}),
       {T({3, 17, 29}), T({29, 13}), T({13})},
       kF,
       20});
  add({"opforge::FusedMatMul",
       A({{"activation", std::string("gelu")}, {"transB", int64_t{1}}, {"alpha", 0.5}}),
       {T({2, 17, 32}), T({24, 32}), T({24})},
       kF,
       20});
  add({"opforge::FusedMatMul",
       A({{"activation", std::string("sigmoid")}}),
       {T({4, 8, 16}), T({4, 16, 8})},
       {F32, B16},
       20,
       false,
       "batched, no bias"});
  add({"opforge::FusedMatMul",
       A({{"activation", std::string("gelu")}}),
       {T({3, 5, 16}), T({16, 7}), T({7})},
       {F32, F16},
       20,
       false,
       "GELU over 105 elements: the activation's element-wise path (the 16-byte one needs a "
       "multiple "
       "of 4 or 8)"});
  add({"opforge::FusedMatMul",
       A({{"activation", std::string("gelu_tanh")}}),
       {T({2, 9, 64}), T({64, 40}), T({40})},
       kF,
       20,
       false,
       "tanh GELU with a bias: cuBLASLt's GELU_BIAS epilogue"});
  add({"opforge::FusedMatMul",
       A({{"activation", std::string("gelu_tanh")}}),
       {T({3, 16}), T({16, 24})},
       {F32, F16},
       20,
       false,
       "tanh GELU without a bias: cuBLASLt's GELU epilogue"});
  add({"opforge::FusedMatMul",
       A({{"activation", std::string("silu")}}),
       {T({2, 9, 64}), T({64, 48}), T({48})},
       kF,
       20,
       false,
       "SiLU (LLaMA's gate projection): the bias epilogue, then the activation kernel"});
  add({"opforge::FusedMatMul",
       {},
       {T({2, 9, 64}), T({64, 48}), T({48}), T({2, 9, 48})},
       kF,
       20,
       false,
       "bias and residual (ConvNeXt's fc2 and its residual Add): the residual as cuBLASLt's C"});
  add({"opforge::FusedMatMul",
       A({{"activation", std::string("relu")}}),
       {T({3, 4, 7, 16}), T({3, 1, 16, 12}), None(), T({3, 4, 7, 12})},
       kF,
       20,
       false,
       "batched with a broadcast B, residual without a bias, ReLU after the sum"});
  add({"opforge::FusedMatMul",
       A({{"activation", std::string("gelu")}}),
       {T({5, 24}), T({24, 40}), T({40}), T({5, 40})},
       {F32, F16},
       20,
       false,
       "residual before an erf GELU (the activation kernel after the GEMM)"});
  // The tensor-core kernel (cuda.mma128 / cuda.mma64, FP16/BF16): partial tiles in M, N and K.
  add({"opforge::FusedMatMul",
       A({{"activation", std::string("gelu")}}),
       {T({300, 200}), T({200, 136}), T({136})},
       {F16, B16},
       20,
       false,
       "erf GELU with a bias in the tensor-core kernel's epilogue: 3 row tiles (the last of 44 "
       "rows), 7 K slices (the last of 8), a column tile of 8 past 128"});
  add({"opforge::FusedMatMul",
       A({{"activation", std::string("silu")}, {"transB", int64_t{1}}, {"alpha", 0.75}}),
       {T({2, 130, 72}), T({40, 72}), T({40}), T({2, 130, 40})},
       {F16, B16},
       20,
       false,
       "B transposed, alpha, bias, residual and SiLU, two products (the [N, K] B tile)"});
  add({"opforge::FusedMatMul",
       A({{"activation", std::string("relu")}}),
       {T({3, 2, 33, 48}), T({3, 1, 48, 64})},
       {F16, B16},
       20,
       false,
       "batched with a broadcast B (one call per product offset), no bias"});
  add({"opforge::FusedMatMul",
       A({{"activation", std::string("gelu")}, {"alpha", 1.5}}),
       {T({77, 8}), T({8, 200}), T({200}), T({77, 200})},
       {F16, B16},
       20,
       false,
       "K = 8 (cuda.mma_skinny: half a k16 step zero-filled), N = 200 in column chunks of 128 and "
       "72, alpha, bias, residual and erf GELU"});
}

}  // namespace opforge::test::cases
