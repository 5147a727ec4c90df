// The GPU test cases of opforge::FusedAttention, run by opforge_gpu_onnx_tests (tests/op_cases.h).
#include "op_cases.h"

namespace opforge::test::cases {

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
}

}  // namespace opforge::test::cases
