// The GPU test cases of opforge::FusedGeluChain, run by opforge_gpu_onnx_tests (tests/op_cases.h).
#include "op_cases.h"

namespace opforge::test::cases {

OPFORGE_BUILTIN_CASES(fused_gelu) {
  add({"opforge::FusedGeluChain",
       A({{"chain", std::vector<int32_t>{1}}}),
       {T({4, 33}, -6, 6)},
       kF,
       2,
       true,
       "gelu(gelu)"});
  add({"opforge::FusedGeluChain",
       A({{"approximate", std::string("tanh")},
          {"chain", std::vector<int32_t>{2, 3, 6, 7, 4, 1, 5, 8}},
          {"chain_scalars", std::vector<float>{0, 0, -1.5f, 0.25f, 0, 0, 0, 3.0f}}}),
       {T({3, 1001}, -6, 6)},
       kF,
       2,
       true,
       "every stage"});
}

}  // namespace opforge::test::cases
