// The GPU test cases of opforge::FusedAddLayerNorm, run by opforge_gpu_onnx_tests
// (tests/op_cases.h).
#include "op_cases.h"

namespace opforge::test::cases {

OPFORGE_BUILTIN_CASES(fused_add_layernorm) {
  add({"opforge::FusedAddLayerNorm", {}, {T({4, 3, 40}), T({4, 3, 40}), T({40}), T({40})}, kF, 10});
  add({"opforge::FusedAddLayerNorm",
       A({{"axis", int64_t{1}}}),
       {T({2, 3, 50}), T({2, 3, 50}), T({3, 50})},
       {F32, F16},
       10});
  add({"opforge::FusedAddLayerNorm",
       {},
       {T({2, 9, 768}), T({2, 9, 768}), T({768})},
       kF,
       10,
       false,
       "BERT's rows, no bias: cuda.warp_vec"});
  // The sum kept as output Sum (a pre-LN transformer's residual stream).
  add({"opforge::FusedAddLayerNorm",
       A({{"sum_output", int64_t{1}}}),
       {T({2, 9, 768}), T({2, 9, 768}), T({768}), T({768})},
       kF,
       10,
       false,
       "ViT's pre-LN rows, the sum kept: cuda.warp_vec"});
  add({"opforge::FusedAddLayerNorm",
       A({{"sum_output", int64_t{1}}, {"axis", int64_t{1}}}),
       {T({2, 3, 50}), T({2, 3, 50}), T({3, 50})},
       kF,
       10,
       false,
       "the sum kept, rows the element-wise kernels take"});
  add({"opforge::FusedAddLayerNorm",
       A({{"sum_output", int64_t{1}}}),
       {T({3, 37, 96}), T({3, 37, 96}), T({96}), T({96})},
       kF,
       10,
       false,
       "ConvNeXt's downsampling rows (96), the sum kept: cuda.warp_vec at 4-8 lanes a row"});
}

}  // namespace opforge::test::cases
