// The GPU test cases of ai.onnx::STFT, run by opforge_gpu_onnx_tests (tests/op_cases.h).
#include "op_cases.h"

namespace opforge::test::cases {

OPFORGE_BUILTIN_CASES(stft) {
  add({"STFT",
       {},
       {T({2, 100, 1}), V(I64, {}, {7}), T({16}, 0.1, 1)},
       kF,
       10,
       false,
       "real signal, window 16, step 7, one-sided"});
  add({"STFT",
       A({{"onesided", int64_t{0}}}),
       {T({1, 64, 2}), V(I32, {}, {5}), None(), V(I64, {}, {20})},
       kF,
       10,
       false,
       "complex signal, frame_length 20, no window, both sides"});
  add({"STFT",
       {},
       {T({1, 4000, 1}), V(I64, {}, {512}), T({1024}, 0.1, 1), V(I64, {}, {1024})},
       {F32, F64},
       10,
       false,
       "frames of 1024"});
}

}  // namespace opforge::test::cases
