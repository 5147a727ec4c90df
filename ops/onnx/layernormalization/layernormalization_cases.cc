// The GPU test cases of ai.onnx::LayerNormalization, run by opforge_gpu_onnx_tests
// (tests/op_cases.h).
#include "op_cases.h"

namespace opforge::test::cases {

OPFORGE_BUILTIN_CASES(layernormalization) {
  add({"LayerNormalization", {}, {T({4, 3, 40}), T({40}), T({40})}, kF, 10});
  add({"LayerNormalization",
       A({{"axis", int64_t{1}}, {"_onnx_num_outputs", int64_t{3}}}),
       {T({4, 3, 40}), T({3, 1}), None()},
       kF,
       10,
       false,
       "broadcast scale, statistics outputs"});
  add({"LayerNormalization", {}, {T({2, 3000}), T({3000}), T({3000})}, {F32, F16}, 10});
  add({"LayerNormalization",
       A({{"_onnx_num_outputs", int64_t{3}}}),
       {T({5, 7, 768}), T({768}), T({768})},
       kF,
       10,
       false,
       "ViT's rows with the statistics: cuda.warp_vec at 3-12 vectors a lane"});
  // Short rows: cuda.warp_vec gives a row 4, 8 or 16 lanes, so a warp holds several rows and the
  // last warp's tail (111 and 143 rows) holds groups past the end.
  add({"LayerNormalization",
       A({{"_onnx_num_outputs", int64_t{3}}}),
       {T({3, 37, 96}), T({96}), T({96})},
       kF,
       10,
       false,
       "ConvNeXt's stage-1 rows (96) with the statistics: cuda.warp_vec at 4-8 lanes a row"});
  add({"LayerNormalization",
       {},
       {T({11, 13, 192}), T({192}), T({192})},
       kF,
       10,
       false,
       "ConvNeXt's stage-2 rows (192): cuda.warp_vec at 8-16 lanes a row"});
  add({"LayerNormalization",
       {},
       {T({5, 9, 384}), T({384}), None()},
       kF,
       10,
       false,
       "ConvNeXt's stage-3 rows (384), no bias: cuda.warp_vec at 16-32 lanes a row"});
}

}  // namespace opforge::test::cases
