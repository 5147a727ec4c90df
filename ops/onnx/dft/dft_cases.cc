// The GPU test cases of ai.onnx::DFT, run by opforge_gpu_onnx_tests (tests/op_cases.h).
#include "op_cases.h"

namespace opforge::test::cases {

OPFORGE_BUILTIN_CASES(dft) {
  const int64_t o17 = 17, o20 = 20;
  add({"DFT",
       A({{"_onnx_opset", o17}, {"axis", int64_t{1}}}),
       {T({2, 16, 3, 1})},
       kF,
       10,
       false,
       "opset 17, real input, axis 1"});
  add({"DFT",
       A({{"_onnx_opset", o20}, {"inverse", int64_t{1}}}),
       {T({3, 10, 2}), V(I64, {}, {12}), V(I64, {}, {-2})},
       kF,
       10,
       false,
       "opset 20, inverse, complex, dft_length 12 > 10"});
  add({"DFT",
       A({{"_onnx_opset", o20}, {"inverse", int64_t{1}}, {"onesided", int64_t{1}}}),
       {T({3, 9, 2}), None(), V(I64, {}, {1})},
       kF,
       10,
       false,
       "irfft, n = 16"});
  add({"DFT",
       A({{"_onnx_opset", o17}, {"axis", int64_t{0}}, {"onesided", int64_t{1}}}),
       {T({13, 4, 1}), V(I32, {}, {21})},
       kF,
       10,
       false,
       "rfft, odd n = 21 > 13 (zero-padded)"});
  add({"DFT",
       A({{"_onnx_opset", o20}}),
       {T({2, 1000, 2}), V(I64, {}, {700})},
       {F32, F64},
       10,
       false,
       "truncated to 700 of 1000"});
  // cuFFT only (longer than the direct kernel takes); irfft through cuFFT.
  add({"DFT",
       A({{"_onnx_opset", o17}, {"axis", int64_t{1}}}),
       {T({3, 10007, 1})},
       {F32, F64},
       10,
       false,
       "n = 10007 (prime)"});
  add({"DFT",
       A({{"_onnx_opset", o17},
          {"axis", int64_t{1}},
          {"inverse", int64_t{1}},
          {"onesided", int64_t{1}}}),
       {T({2, 9, 3, 2})},
       kF,
       10,
       false,
       "opset 17 irfft over axis 1"});
}

}  // namespace opforge::test::cases
