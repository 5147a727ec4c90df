// The GPU test cases of ai.onnx::LSTM, run by opforge_gpu_onnx_tests (tests/op_cases.h). Small
// weights keep the recurrence away from saturation, so the comparison sees the arithmetic.
#include "op_cases.h"

namespace opforge::test::cases {

OPFORGE_BUILTIN_CASES(lstm) {
  const int64_t three = 3;
  // Forward, every optional input: X [5, 3, 7], hidden 8.
  add({"LSTM",
       A({{"hidden_size", int64_t{8}}, {"_onnx_num_outputs", three}}),
       {T({5, 3, 7}, -1, 1), T({1, 32, 7}, -0.4, 0.4), T({1, 32, 8}, -0.4, 0.4),
        T({1, 64}, -0.5, 0.5), None(), T({1, 3, 8}, -1, 1), T({1, 3, 8}, -1, 1),
        T({1, 24}, -0.5, 0.5)},
       kF,
       20,
       false,
       "forward, peepholes, initial state"});
  // Bidirectional, batch first, sequence lengths 5, 2, 4 (and 0 for the last row), clip,
  // input_forget, activations with alpha and beta.
  add({"LSTM",
       A({{"hidden_size", int64_t{6}},
          {"direction", std::string("bidirectional")},
          {"layout", int64_t{1}},
          {"clip", 1.5},
          {"input_forget", int64_t{1}},
          {"activations", std::string("Sigmoid,Tanh,Tanh,HardSigmoid,Softsign,ScaledTanh")},
          {"activation_alpha", std::vector<float>{0.3f, 0.9f}},
          {"activation_beta", std::vector<float>{0.45f, 1.1f}},
          {"_onnx_num_outputs", three}}),
       {T({4, 5, 3}, -1, 1), T({2, 24, 3}, -0.5, 0.5), T({2, 24, 6}, -0.5, 0.5),
        T({2, 48}, -0.5, 0.5), V(I32, {4}, {5, 2, 4, 0}), T({4, 2, 6}, -1, 1), T({4, 2, 6}, -1, 1),
        None()},
       kF,
       20,
       false,
       "bidirectional, layout 1, sequence_lens, clip, input_forget, activations"});
  // Reverse, more gate rows than warps and a state longer than a block: hidden 300.
  add({"LSTM",
       A({{"hidden_size", int64_t{300}}, {"direction", std::string("reverse")}}),
       {T({6, 2, 40}, -1, 1), T({1, 1200, 40}, -0.1, 0.1), T({1, 1200, 300}, -0.05, 0.05),
        T({1, 2400}, -0.2, 0.2)},
       {F32, F16, F64},
       20,
       false,
       "reverse, hidden 300"});
}

}  // namespace opforge::test::cases
