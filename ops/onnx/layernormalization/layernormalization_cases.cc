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
}

}  // namespace opforge::test::cases
