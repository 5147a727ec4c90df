// The GPU test cases of ai.onnx::AveragePool, run by opforge_gpu_onnx_tests (tests/op_cases.h).
#include "op_cases.h"

namespace opforge::test::cases {

OPFORGE_BUILTIN_CASES(averagepool) {
  add({"AveragePool",
       A({{"kernel_shape", ints({3, 3})}, {"strides", ints({2, 2})}, {"pads", ints({1, 1, 1, 1})}}),
       {T({2, 3, 9, 8})},
       kF,
       10});
  add({"AveragePool",
       A({{"kernel_shape", ints({3, 2})},
          {"pads", ints({1, 0, 1, 1})},
          {"count_include_pad", int64_t{1}},
          {"ceil_mode", int64_t{1}},
          {"strides", ints({2, 2})}}),
       {T({2, 3, 9, 8})},
       {F32, F64},
       10,
       false,
       "count_include_pad, ceil_mode"});
}

}  // namespace opforge::test::cases
