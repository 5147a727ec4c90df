// The GPU test cases of opforge::FusedConv, run by opforge_gpu_onnx_tests (tests/op_cases.h).
#include "op_cases.h"

namespace opforge::test::cases {

OPFORGE_BUILTIN_CASES(fused_conv) {
  add({"opforge::FusedConv",
       A({{"strides", ints({8, 8})}, {"activation", std::string("relu")}}),
       {T({2, 4, 16, 24}), T({8, 4, 8, 8}), T({8}), T({2, 8, 2, 3})},
       kF,
       20,
       false,
       "patch embedding with bias, residual and ReLU (cuda.patch_lt and the epilogue)"});
  add({"opforge::FusedConv",
       A({{"pads", ints({1, 1, 1, 1})}, {"activation", std::string("relu")}}),
       {T({2, 8, 9, 10}), T({16, 8, 3, 3}), T({16}), T({2, 16, 9, 10})},
       kF,
       20});
  add({"opforge::FusedConv",
       A({{"strides", ints({2, 2})}, {"activation", std::string("gelu")}}),
       {T({2, 4, 9, 8}), T({6, 4, 3, 3}), T({6})},
       {F32, F16},
       20});
  add({"opforge::FusedConv",
       A({{"activation", std::string("none")}}),
       {T({1, 4, 6, 6}), T({4, 4, 1, 1}), None(), T({1, 4, 6, 6})},
       {F32},
       20,
       false,
       "residual without bias"});
  add({"opforge::FusedConv",
       A({{"pads", ints({1, 1, 1, 1})}, {"activation", std::string("relu")}}),
       {T({2, 8, 8, 8}), T({32, 8, 3, 3}), T({32}), T({2, 32, 8, 8})},
       kF,
       20,
       true,
       "64 outputs a channel, 32 channels: the 16-byte epilogue in both layouts (scalar "
       "unaligned)"});
  add({"opforge::FusedConv",
       A({{"activation", std::string("relu")}}),
       {T({2, 64, 7, 9}), T({48, 64, 1, 1}), T({48}), T({2, 48, 7, 9})},
       kF,
       20,
       false,
       "1x1 with bias, residual and ReLU: cuda.lt1x1 (HWC), the residual as the GEMM's C"});
  add({"opforge::FusedConv",
       A({{"activation", std::string("relu")}}),
       {T({3, 20, 5, 5}), T({36, 20, 1, 1}), T({36})},
       kF,
       20,
       false,
       "1x1, odd channel counts, no residual: cuda.lt1x1 at 8-byte rows"});
  add({"opforge::FusedConv",
       A({{"activation", std::string("gelu")}}),
       {T({2, 16, 4, 6}), T({24, 16, 1, 1}), None(), T({2, 24, 4, 6})},
       {F32, F16},
       20,
       false,
       "1x1 with a residual and GELU after it (cuda.lt1x1: the activation kernel after the GEMM)"});
  // SiLU (EfficientNet's MBConv): cuDNN graphs' SWISH epilogue, the activation kernel elsewhere.
  add({"opforge::FusedConv",
       A({{"pads", ints({1, 1, 1, 1})}, {"activation", std::string("silu")}}),
       {T({2, 16, 9, 10}), T({32, 16, 3, 3}), T({32})},
       kF,
       20,
       true,
       "3x3 with bias and SiLU"});
  add({"opforge::FusedConv",
       A({{"pads", ints({1, 1, 1, 1})},
          {"group", int64_t{32}},
          {"activation", std::string("silu")}}),
       {T({2, 32, 14, 14}), T({32, 1, 3, 3}), T({32})},
       kF,
       20,
       false,
       "depthwise 3x3 with bias and SiLU (MBConv's)"});
  add({"opforge::FusedConv",
       A({{"activation", std::string("silu")}}),
       {T({2, 24, 7, 9}), T({96, 24, 1, 1}), T({96})},
       kF,
       20,
       false,
       "1x1 expansion with bias and SiLU (cuda.lt1x1 with the activation kernel)"});
  add({"opforge::FusedConv",
       A({{"activation", std::string("silu")}}),
       {T({2, 40, 15, 17}), T({112, 40, 1, 1}), T({112}), T({2, 112, 15, 17})},
       {F16, B16},
       20,
       false,
       "1x1 with bias, residual and SiLU on 510 rows and K = 40 (cuda.mma1x1: partial tiles in "
       "every direction, the epilogue in the kernel)"});
  add({"opforge::FusedConv",
       A({{"activation", std::string("silu")}}),
       {T({3, 16, 11, 13}), T({96, 16, 1, 1}), T({96}), T({3, 96, 11, 13})},
       {F16, B16},
       20,
       false,
       "EfficientNet's 16 -> 96 expansion with bias, residual and SiLU on 429 rows "
       "(cuda.mma1x1_skinny: one k16 step, 12 n8 tiles a warp, the last row tile partial)"});
  add({"opforge::FusedConv",
       A({{"pads", ints({3, 3, 3, 3})},
          {"group", int64_t{24}},
          {"activation", std::string("relu")}}),
       {T({2, 24, 10, 12}), T({24, 1, 7, 7}), T({24}), T({2, 24, 10, 12})},
       kF,
       20,
       false,
       "depthwise 7x7 with bias, residual and ReLU (cuda.depthwise's epilogue)"});
  add({"opforge::FusedConv",
       A({{"pads", ints({1, 1, 1, 1})},
          {"strides", ints({2, 2})},
          {"group", int64_t{40}},
          {"activation", std::string("silu")}}),
       {T({2, 40, 13, 14}), T({40, 1, 3, 3}), T({40})},
       kF,
       20,
       false,
       "depthwise 3x3 stride 2 with bias and SiLU (MBConv's downsampling)"});
}

}  // namespace opforge::test::cases
