// The GPU test cases of ai.onnx::Conv, run by opforge_gpu_onnx_tests (tests/op_cases.h).
#include "op_cases.h"

namespace opforge::test::cases {

OPFORGE_BUILTIN_CASES(conv) {
  add({"Conv",
       A({{"pads", ints({1, 1, 1, 1})}}),
       {T({2, 8, 9, 10}), T({16, 8, 3, 3}), T({16})},
       kF,
       20});
  add({"Conv",
       A({{"strides", ints({2, 2})}, {"group", int64_t{2}}, {"dilations", ints({2, 1})}}),
       {T({2, 8, 11, 10}), T({6, 4, 3, 3})},
       kF,
       20,
       false,
       "groups, strides, dilations"});
  add({"Conv",
       A({{"pads", ints({0, 1, 1, 0})}}),
       {T({1, 3, 7, 6}), T({4, 3, 2, 2}), T({4})},
       {F32, F16},
       20,
       false,
       "asymmetric pads"});
  add({"Conv",
       A({{"pads", ints({1, 1})}}),
       {T({2, 4, 15}), T({5, 4, 3}), T({5})},
       {F32, F64},
       20,
       false,
       "1-D"});
  add({"Conv", {}, {T({1, 2, 4, 5, 6}), T({3, 2, 2, 2, 2}), T({3})}, {F32}, 20, false, "3-D"});
  add({"Conv",
       {},
       {T({2, 32, 5, 6}), T({24, 32, 1, 1}), T({24})},
       kF,
       20,
       false,
       "1x1: cuda.lt1x1 (HWC)"});
  add({"Conv", {}, {T({2, 16, 10}), T({8, 16, 1})}, {F32, F16}, 20, false, "1x1, 1-D, no bias"});
  // Depthwise (group = C = M): cuda.depthwise on HWC tensors, cuDNN elsewhere.
  add({"Conv",
       A({{"pads", ints({3, 3, 3, 3})}, {"group", int64_t{16}}}),
       {T({2, 16, 13, 11}), T({16, 1, 7, 7}), T({16})},
       kF,
       20,
       false,
       "depthwise 7x7 (ConvNeXt's)"});
  add({"Conv",
       A({{"pads", ints({2, 2, 2, 2})}, {"strides", ints({2, 2})}, {"group", int64_t{24}}}),
       {T({2, 24, 15, 17}), T({24, 1, 5, 5})},
       kF,
       20,
       false,
       "depthwise 5x5 stride 2, no bias"});
  // cuda.depthwise_tile: several tiles a plane with partial edge tiles (rows and columns); a 7x7
  // stride 2 window whose tile rows are cut to fit 48 KiB of shared memory, asymmetric pads.
  add({"Conv",
       A({{"pads", ints({3, 3, 3, 3})}, {"group", int64_t{48}}}),
       {T({2, 48, 29, 37}), T({48, 1, 7, 7}), T({48})},
       kF,
       20,
       false,
       "depthwise 7x7 over several tiles, partial edge tiles"});
  // ConvNeXt's stage-3 plane (14 x 14): two tiles of 7 rows each, several channel slabs for both
  // block sizes (cuda.depthwise_tile and _s).
  add({"Conv",
       A({{"pads", ints({3, 3, 3, 3})}, {"group", int64_t{96}}}),
       {T({2, 96, 14, 14}), T({96, 1, 7, 7}), T({96})},
       kF,
       20,
       false,
       "depthwise 7x7 on a 14x14 plane, tiles of 7 rows, several channel slabs"});
  add({"Conv",
       A({{"pads", ints({3, 2, 2, 3})}, {"strides", ints({2, 2})}, {"group", int64_t{64}}}),
       {T({1, 64, 23, 40}), T({64, 1, 7, 7}), T({64})},
       kF,
       20,
       false,
       "depthwise 7x7 stride 2, asymmetric pads, 64 channels"});
  add({"Conv",
       A({{"pads", ints({1, 0, 2, 1})}, {"dilations", ints({1, 2})}, {"group", int64_t{5}}}),
       {T({1, 5, 9, 10}), T({5, 1, 3, 4}), T({5})},
       kF,
       20,
       false,
       "depthwise 3x4, dilated, asymmetric pads, 5 channels (the generic loop, one channel a "
       "thread)"});
  // cuda.patch_lt: ViT's patch embedding in small (8x8 windows, stride 8: the 16-byte gather), a
  // window with rows of zeros above and below (vertical pads), and 3x3 / 3 windows with pads on
  // both axes (the element gather).
  add({"Conv",
       A({{"strides", ints({8, 8})}}),
       {T({2, 3, 32, 48}), T({16, 3, 8, 8}), T({16})},
       kF,
       20,
       false,
       "patch embedding 8x8 stride 8 (cuda.patch_lt, 16-byte gather)"});
  add({"Conv",
       A({{"strides", ints({8, 8})}, {"pads", ints({2, 0, 2, 0})}}),
       {T({1, 3, 20, 16}), T({8, 3, 8, 8})},
       kF,
       20,
       false,
       "8x8 stride 8, rows of padding above and below, no bias"});
  add({"Conv",
       A({{"strides", ints({3, 3})}, {"pads", ints({1, 1, 1, 1})}}),
       {T({2, 5, 10, 13}), T({7, 5, 3, 3}), T({7})},
       kF,
       20,
       false,
       "3x3 stride 3, pads on both axes (cuda.patch_lt, element gather)"});
}

}  // namespace opforge::test::cases
