// The GPU test cases of ai.onnx::RNN, run by opforge_gpu_onnx_tests (tests/op_cases.h). Small
// weights keep the recurrence away from saturation, so the comparison sees the arithmetic.
#include "op_cases.h"

namespace opforge::test::cases {

OPFORGE_BUILTIN_CASES(rnn) {
  const int64_t two = 2;
  add({"RNN",
       A({{"hidden_size", int64_t{7}}, {"_onnx_num_outputs", two}}),
       {T({6, 3, 5}, -1, 1), T({1, 7, 5}, -0.5, 0.5), T({1, 7, 7}, -0.5, 0.5),
        T({1, 14}, -0.5, 0.5), None(), T({1, 3, 7}, -1, 1)},
       kF,
       20,
       false,
       "forward, initial state"});
  // Bidirectional, batch first, sequence lengths, clip, Relu and Affine.
  add({"RNN",
       A({{"hidden_size", int64_t{4}},
          {"direction", std::string("bidirectional")},
          {"layout", int64_t{1}},
          {"clip", 1.0},
          {"activations", std::string("Relu,Affine")},
          {"activation_alpha", std::vector<float>{0.7f}},
          {"activation_beta", std::vector<float>{0.1f}},
          {"_onnx_num_outputs", two}}),
       {T({3, 5, 6}, -1, 1), T({2, 4, 6}, -0.5, 0.5), T({2, 4, 4}, -0.5, 0.5), T({2, 8}, -0.5, 0.5),
        V(I32, {3}, {2, 5, 1})},
       kF,
       20,
       false,
       "bidirectional, layout 1, sequence_lens, clip, Relu/Affine"});
  add({"RNN",
       A({{"hidden_size", int64_t{200}}, {"direction", std::string("reverse")}}),
       {T({5, 2, 30}, -1, 1), T({1, 200, 30}, -0.1, 0.1), T({1, 200, 200}, -0.06, 0.06)},
       {F32, F16, F64},
       20,
       false,
       "reverse, hidden 200"});
}

}  // namespace opforge::test::cases
