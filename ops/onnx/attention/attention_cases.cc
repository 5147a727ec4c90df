// The GPU test cases of ai.onnx::Attention, run by opforge_gpu_onnx_tests (tests/op_cases.h).
#include "op_cases.h"

namespace opforge::test::cases {

OPFORGE_BUILTIN_CASES(attention) {
  const int64_t four = 4;
  // 4-D, GQA (6 query heads on 2 key/value heads), a float mask shorter than the keys, causal with
  // a past of 5, every output (qk_matmul_output after the bias).
  add({"Attention",
       A({{"is_causal", int64_t{1}},
          {"qk_matmul_output_mode", int64_t{2}},
          {"_onnx_num_outputs", four}}),
       {T({2, 6, 7, 16}), T({2, 2, 7, 16}), T({2, 2, 7, 12}), T({7, 10}, -1, 1), T({2, 2, 5, 16}),
        T({2, 2, 5, 12})},
       kF,
       10,
       false,
       "4-D GQA, causal, past, float mask, mode 2"});
  // 3-D with heads, a boolean 4-D mask, softcap and scale, qk_matmul_output after softmax.
  add({"Attention",
       A({{"q_num_heads", int64_t{4}},
          {"kv_num_heads", int64_t{4}},
          {"softcap", 1.5},
          {"scale", 0.3},
          {"qk_matmul_output_mode", int64_t{3}},
          {"_onnx_num_outputs", four}}),
       {T({3, 9, 32}), T({3, 11, 32}), T({3, 11, 20}), R(BOOL, {3, 4, 9, 11}, 0, 1)},
       kF,
       10,
       false,
       "3-D, bool mask, softcap, mode 3"});
  // Padded keys (opset 24), a sliding window (opset 25), one query row per batch (decode).
  add({"Attention",
       A({{"is_causal", int64_t{1}}, {"left_window_size", int64_t{3}}}),
       {T({3, 4, 1, 8}), T({3, 2, 9, 8}), T({3, 2, 9, 8}), None(), None(), None(),
        V(I64, {3}, {9, 4, 6})},
       kF,
       10,
       false,
       "decode, nonpad_kv_seqlen, window"});
  // Long sequences (many keys per warp lane), Y only.
  add({"Attention",
       {},
       {T({1, 2, 70, 64}), T({1, 2, 300, 64}), T({1, 2, 300, 64})},
       {F32, F16, B16},
       10,
       false,
       "300 keys"});
}

}  // namespace opforge::test::cases
