// The GPU test cases of ai.onnx::RotaryEmbedding, run by opforge_gpu_onnx_tests
// (tests/op_cases.h). Two products summed in double: factor 1.
#include "op_cases.h"

namespace opforge::test::cases {

OPFORGE_BUILTIN_CASES(rotaryembedding) {
  // 4-D [B, H, S, D], caches indexed by position ids (any rows of 50).
  add({"RotaryEmbedding",
       {},
       {T({2, 4, 3, 8}), T({50, 4}), T({50, 4}), U(I64, {2, 3}, 50)},
       kF,
       1,
       false,
       "4-D, position ids"});
  // 3-D [B, S, H * D], interleaved, partial rotation, per-(b, s) caches.
  add({"RotaryEmbedding",
       A({{"num_heads", int64_t{4}},
          {"interleaved", int64_t{1}},
          {"rotary_embedding_dim", int64_t{6}}}),
       {T({2, 5, 4 * 10}), T({2, 5, 3}), T({2, 5, 3}), None()},
       kF,
       1,
       false,
       "3-D, interleaved, partial"});
  // Non-interleaved partial rotation, larger, position ids.
  add({"RotaryEmbedding",
       A({{"num_heads", int64_t{8}}, {"rotary_embedding_dim", int64_t{32}}}),
       {T({3, 40, 8 * 64}), T({128, 16}), T({128, 16}), U(I64, {3, 40}, 128)},
       {F32, F16, B16},
       1,
       false,
       "3-D, partial, position ids"});
}

}  // namespace opforge::test::cases
