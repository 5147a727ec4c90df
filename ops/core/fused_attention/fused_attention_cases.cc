// The GPU test cases of opforge::FusedAttention, run by opforge_gpu_onnx_tests (tests/op_cases.h).
#include <cmath>

#include "op_cases.h"

namespace opforge::test::cases {

namespace {

// An additive mask [b, 1, sq, sk] (0 seen, -inf hidden) with `hidden(b, i, j)`.
template <typename F>
In maskIn(int64_t b, int64_t sq, int64_t sk, F hidden) {
  std::vector<double> v;
  for (int64_t x = 0; x < b; ++x)
    for (int64_t i = 0; i < sq; ++i)
      for (int64_t j = 0; j < sk; ++j) v.push_back(hidden(x, i, j) ? -INFINITY : 0.0);
  return V(TT, {b, 1, sq, sk}, v);
}

}  // namespace

OPFORGE_BUILTIN_CASES(fused_attention) {
  add({"opforge::FusedAttention",
       A({{"scale", 0.3}}),
       {T({2, 3, 5, 8}), T({2, 3, 7, 8}), T({2, 3, 7, 6})},
       kF,
       10});
  add({"opforge::FusedAttention",
       A({{"scale", 0.2}, {"k_transposed", int64_t{1}}}),
       {T({3, 33, 16}), T({3, 16, 40}), T({3, 40, 16})},
       {F32, F16, B16},
       10,
       false,
       "K transposed"});
  add({"opforge::FusedAttention",
       A({{"scale", 0.1}}),
       {T({1, 2, 9, 32}), T({1, 2, 400, 32}), T({1, 2, 400, 32})},
       {F32, F16},
       10,
       false,
       "K and V beyond shared memory"});
  add({"opforge::FusedAttention",
       A({{"scale", 0.25}, {"layout", std::string("sb3e")}, {"heads", int64_t{4}}}),
       {T({9, 2, 96}), T({9, 2, 96}), T({9, 2, 96})},
       kF,
       10,
       false,
       "packed sb3e"});
  add({"opforge::FusedAttention",
       A({{"scale", 0.1}, {"layout", std::string("sb3e")}, {"heads", int64_t{2}}}),
       {T({300, 1, 192}), T({300, 1, 192}), T({300, 1, 192})},
       {F32, F16},
       10,
       false,
       "packed sb3e beyond shared memory"});
  // cuda.flash: 64-row blocks and 64-key steps with partial last ones, every padded head size.
  add({"opforge::FusedAttention",
       A({{"scale", 0.125}, {"layout", std::string("sb3e")}, {"heads", int64_t{12}}}),
       {T({197, 2, 2304}), T({197, 2, 2304}), T({197, 2, 2304})},
       {F16, B16},
       10,
       false,
       "packed sb3e, ViT-B/16's geometry (d = 64)"});
  add({"opforge::FusedAttention",
       A({{"scale", 0.09}}),
       {T({2, 2, 130, 128}), T({2, 2, 77, 128}), T({2, 2, 77, 128})},
       {F16, B16},
       10,
       true,
       "d = 128, partial blocks"});
  add({"opforge::FusedAttention",
       A({{"scale", 0.15}}),
       {T({1, 3, 70, 40}), T({1, 3, 150, 40}), T({1, 3, 150, 24})},
       {F16, B16},
       10,
       true,
       "d = 40 and dv = 24 padded to 64"});
  // The bias (an attention mask): padding keys of batch 1 (broadcast over heads and rows); a
  // window that hides whole 64-key steps, the first one for rows 0-9; a random bias over heads.
  add({"opforge::FusedAttention",
       A({{"scale", 0.09}}),
       {T({2, 2, 130, 128}), T({2, 2, 77, 128}), T({2, 2, 77, 128}),
        maskIn(2, 1, 77, [](int64_t b, int64_t, int64_t j) { return b == 1 && j >= 60; })},
       {F32, F16, B16},
       10,
       false,
       "padding mask [B, 1, 1, Sk]"});
  add({"opforge::FusedAttention",
       A({{"scale", 0.15}}),
       {T({1, 3, 70, 40}), T({1, 3, 150, 40}), T({1, 3, 150, 40}),
        maskIn(1, 70, 150,
               [](int64_t, int64_t i, int64_t j) { return j > i + 80 || (i < 10 && j < 64); })},
       {F32, F16, B16},
       10,
       true,
       "windowed mask, whole key steps hidden"});
  add({"opforge::FusedAttention",
       A({{"scale", 0.15}, {"nan_to_zero", int64_t{1}}}),
       {T({1, 2, 70, 64}), T({1, 2, 150, 64}), T({1, 2, 150, 64}),
        maskIn(1, 70, 150,
               [](int64_t, int64_t i, int64_t j) { return j > i + 80 || (i >= 20 && i < 23); })},
       {F32, F16, B16},
       10,
       true,
       "nan_to_zero: rows 20-22 see no key (zeros)"});
  add({"opforge::FusedAttention",
       A({{"scale", 0.11}, {"k_transposed", int64_t{1}}, {"nan_to_zero", int64_t{1}}}),
       {T({2, 2, 70, 64}), T({2, 2, 64, 77}), T({2, 2, 77, 64}),
        maskIn(2, 70, 77,
               [](int64_t b, int64_t i, int64_t j) { return j > i || (b == 1 && j > 50); })},
       {F32, F16, B16},
       10,
       false,
       "K transposed as BERT's export gives it, Sk = 77 (element loads), causal and padding mask"});
  // Layout bshd (transformers' split heads read in place): Q, K, V [B, S, H, d], Y [B, Sq, H, dv].
  add({"opforge::FusedAttention",
       A({{"scale", 0.125}, {"layout", std::string("bshd")}, {"nan_to_zero", int64_t{1}}}),
       {T({2, 130, 12, 64}), T({2, 77, 12, 64}), T({2, 77, 12, 64}),
        maskIn(2, 1, 77, [](int64_t b, int64_t, int64_t j) { return b == 1 && j >= 40; })},
       {F32, F16, B16},
       10,
       true,
       "layout bshd, BERT-base's heads, padding mask"});
  add({"opforge::FusedAttention",
       A({{"scale", 0.2}, {"layout", std::string("bshd")}}),
       {T({1, 9, 3, 40}), T({1, 33, 3, 40}), T({1, 33, 3, 24})},
       kF,
       10,
       false,
       "layout bshd, d = 40, dv = 24"});
  // Layout bs3e (the packed projection batch first: ViT's folded transposes, merged Q/K/V GEMMs).
  add({"opforge::FusedAttention",
       A({{"scale", 0.25}, {"layout", std::string("bs3e")}, {"heads", int64_t{4}}}),
       {T({2, 9, 96}), T({2, 9, 96}), T({2, 9, 96})},
       kF,
       10,
       false,
       "packed bs3e"});
  add({"opforge::FusedAttention",
       A({{"scale", 0.125}, {"layout", std::string("bs3e")}, {"heads", int64_t{12}}}),
       {T({2, 197, 2304}), T({2, 197, 2304}), T({2, 197, 2304})},
       {F16, B16},
       10,
       false,
       "packed bs3e, ViT-B/16's geometry (d = 64)"});
  add({"opforge::FusedAttention",
       A({{"scale", 0.125},
          {"layout", std::string("bs3e")},
          {"heads", int64_t{12}},
          {"nan_to_zero", int64_t{1}}}),
       {T({2, 128, 2304}), T({2, 128, 2304}), T({2, 128, 2304}),
        maskIn(2, 128, 128, [](int64_t b, int64_t i, int64_t j) { return b == 1 && j >= 100; })},
       {F32, F16, B16},
       10,
       true,
       "packed bs3e, BERT-base's geometry, padding mask over every row"});
  // windows: Swin-T's shifted windows (7x7 windows, N = 49, d = 32), batch x reads bias row x mod
  // W.
  add({"opforge::FusedAttention",
       A({{"scale", 0.17}, {"windows", int64_t{4}}}),
       {T({8, 3, 49, 32}), T({8, 3, 49, 32}), T({8, 3, 49, 32}), T({4, 3, 49, 49})},
       kF,
       10,
       false,
       "shifted-window bias [W, H, N, N], bhsd"});
  add({"opforge::FusedAttention",
       A({{"scale", 0.17},
          {"layout", std::string("bs3e")},
          {"heads", int64_t{3}},
          {"windows", int64_t{4}}}),
       {T({8, 49, 288}), T({8, 49, 288}), T({8, 49, 288}), T({4, 3, 49, 49})},
       {F32, F16, B16},
       10,
       true,
       "shifted-window bias, packed bs3e (Swin-T's first stage)"});
  add({"opforge::FusedAttention",
       A({{"scale", 0.2}}),
       {T({2, 3, 9, 16}), T({2, 3, 40, 16}), T({2, 3, 40, 16}), T({3, 1, 40})},
       kF,
       10,
       false,
       "random bias [H, 1, Sk]"});
}

}  // namespace opforge::test::cases
