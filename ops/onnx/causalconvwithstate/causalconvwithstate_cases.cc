// The GPU test cases of ai.onnx::CausalConvWithState, run by opforge_gpu_onnx_tests
// (tests/op_cases.h). The tactic sums the K products in float (the reference in double) before
// rounding: factor 2; with SiLU, a convolution result that rounds to the neighbouring FP16/BF16
// value moves the activation by about one more ulp: factor 8.
#include "op_cases.h"

namespace opforge::test::cases {

OPFORGE_BUILTIN_CASES(causalconvwithstate) {
  const char* op = "CausalConvWithState";
  const Attrs silu = A({{"activation", std::string("silu")}});
  add({op, {}, {T({2, 4, 8}), T({4, 1, 4}), None(), None()}, kF, 2, true, "no bias, no state"});
  add({op, {}, {T({2, 4, 8}), T({4, 1, 4}), T({4}), T({2, 4, 3})}, kF, 2, true, "bias and state"});
  add({op,
       A({{"activation", std::string("none")}}),
       {T({2, 4, 8}), T({4, 1, 4}), None(), T({2, 4, 3})},
       kF,
       2,
       false,
       "state, no bias"});
  add({op, {}, {T({3, 5, 1}), T({5, 1, 4}), T({5}), T({3, 5, 3})}, kF, 2, false, "decode step"});
  // K = 1: an empty state (given or not).
  add({op, {}, {T({2, 3, 6}), T({3, 1, 1}), T({3}), None()}, kF, 2, false, "K = 1"});
  add({op, {}, {T({2, 3, 6}), T({3, 1, 1}), None(), T({2, 3, 0})}, kF, 2, false, "K = 1, state"});
  // L < K - 1: present_state holds past positions.
  add({op, {}, {T({2, 4, 2}), T({4, 1, 5}), None(), None()}, kF, 2, false, "L < K - 1"});
  add({op,
       {},
       {T({2, 4, 2}), T({4, 1, 5}), T({4}), T({2, 4, 4})},
       kF,
       2,
       false,
       "L < K - 1, state"});
  add({op, silu, {T({2, 4, 8}), T({4, 1, 4}), None(), None()}, kF, 8, false, "silu"});
  add({op, silu, {T({2, 4, 8}), T({4, 1, 4}), T({4}), T({2, 4, 3})}, kF, 8, true, "silu, state"});
  add({op,
       A({{"activation", std::string("swish")}}),
       {T({1, 6, 5}), T({6, 1, 3}), T({6}), None()},
       kF,
       8,
       false,
       "swish"});
  add({op, silu, {T({2, 64, 33}), T({64, 1, 4}), T({64}), T({2, 64, 3})}, kF, 8, false, "larger"});
  add({op, {}, {T({0, 4, 8}), T({4, 1, 4}), None(), T({0, 4, 3})}, kF, 2, false, "empty batch"});
}

}  // namespace opforge::test::cases
