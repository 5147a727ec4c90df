// The GPU test cases of ai.onnx::GRU, run by opforge_gpu_onnx_tests (tests/op_cases.h). Small
// weights keep the recurrence away from saturation, so the comparison sees the arithmetic.
#include "op_cases.h"

namespace opforge::test::cases {

OPFORGE_BUILTIN_CASES(gru) {
  const int64_t two = 2;
  // Forward, reset gate before R_h (linear_before_reset = 0), initial state.
  add({"GRU",
       A({{"hidden_size", int64_t{9}}, {"_onnx_num_outputs", two}}),
       {T({5, 3, 7}, -1, 1), T({1, 27, 7}, -0.4, 0.4), T({1, 27, 9}, -0.4, 0.4),
        T({1, 54}, -0.5, 0.5), None(), T({1, 3, 9}, -1, 1)},
       kF,
       20,
       false,
       "forward, linear_before_reset 0"});
  // Bidirectional, batch first, linear_before_reset, sequence lengths, clip, activations.
  add({"GRU",
       A({{"hidden_size", int64_t{5}},
          {"direction", std::string("bidirectional")},
          {"layout", int64_t{1}},
          {"linear_before_reset", int64_t{1}},
          {"clip", 2.0},
          {"activations", std::string("Sigmoid,Tanh,HardSigmoid,LeakyRelu")},
          {"activation_alpha", std::vector<float>{0.25f, 0.05f}},
          {"activation_beta", std::vector<float>{0.4f}},
          {"_onnx_num_outputs", two}}),
       {T({3, 6, 4}, -1, 1), T({2, 15, 4}, -0.5, 0.5), T({2, 15, 5}, -0.5, 0.5),
        T({2, 30}, -0.5, 0.5), V(I64, {3}, {6, 1, 3}), T({3, 2, 5}, -1, 1)},
       kF,
       20,
       false,
       "bidirectional, layout 1, linear_before_reset, sequence_lens, clip, activations"});
  // Reverse, hidden 260 (the h gate's second pass over more rows than warps).
  add({"GRU",
       A({{"hidden_size", int64_t{260}}, {"direction", std::string("reverse")}}),
       {T({4, 2, 33}, -1, 1), T({1, 780, 33}, -0.1, 0.1), T({1, 780, 260}, -0.05, 0.05)},
       {F32, F16, F64},
       20,
       false,
       "reverse, hidden 260"});
}

}  // namespace opforge::test::cases
