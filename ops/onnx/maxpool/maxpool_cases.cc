// The GPU test cases of ai.onnx::MaxPool, run by opforge_gpu_onnx_tests (tests/op_cases.h).
#include "op_cases.h"

namespace opforge::test::cases {

OPFORGE_BUILTIN_CASES(maxpool) {
  add({"MaxPool",
       A({{"kernel_shape", ints({3, 3})}, {"strides", ints({2, 2})}, {"pads", ints({1, 1, 1, 1})}}),
       {T({2, 3, 9, 8})},
       {F32, F16, B16, F64, I32, U8},
       10});
  add({"MaxPool",
       A({{"kernel_shape", ints({2, 3})},
          {"dilations", ints({2, 1})},
          {"ceil_mode", int64_t{1}},
          {"storage_order", int64_t{1}},
          {"_onnx_num_outputs", int64_t{2}}}),
       {T({2, 3, 9, 8})},
       {F32, F16},
       10,
       false,
       "indices, column-major"});
  add({"MaxPool",
       A({{"kernel_shape", ints({3, 3})},
          {"strides", ints({2, 2})},
          {"pads", ints({1, 1, 1, 1})},
          {"_onnx_num_outputs", int64_t{1}}}),
       {T({2, 16, 13, 12})},
       {F32, F16, B16},
       10,
       true,
       "channels a multiple of 8: vector loads channels-last (scalar when unaligned)"});
  add({"MaxPool",
       A({{"kernel_shape", ints({3})}, {"auto_pad", std::string("SAME_UPPER")}}),
       {T({2, 3, 10})},
       {F32},
       10});
  add({"MaxPool",
       A({{"kernel_shape", ints({3, 3})},
          {"strides", ints({2, 2})},
          {"pads", ints({1, 1, 1, 1})},
          {"_onnx_num_outputs", int64_t{1}}}),
       {T({2, 3, 9, 8})},
       {F32, F16, B16, F64, I32, U8},
       10,
       false,
       "no indices"});
  add({"MaxPool",
       A({{"kernel_shape", ints({3, 2})},
          {"pads", ints({1, 0, 1, 1})},
          {"dilations", ints({1, 2})},
          {"_onnx_num_outputs", int64_t{1}}}),
       {T({1, 2, 5, 300})},
       {F32, F16},
       10,
       false,
       "no indices, rows wider than a block"});
}

}  // namespace opforge::test::cases
